// Package keyring provides the keys that seal Tidegate's secrets at rest: envelope encryption with
// AWS KMS. Each owner (an org, for its apps' secrets; a tenant, for its webhooks' signing secrets)
// has its own data keys, made by KMS's GenerateDataKey under the configured KMS key with an
// encryption context naming the owner, and kept wrapped in the control table. A function unwraps
// an owner's data key with KMS's Decrypt the first time it needs it and keeps it in memory; the
// key material itself is never in configuration. Values are sealed with shared/secretbox, which
// names the data key in each value, so that after a rotation new values use the owner's newest
// data key and old ones still open with the key that sealed them.
package keyring

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/tidegate/tidegate/shared/secretbox"
)

// ContextKey is the encryption context key that binds a data key to its owner: KMS unwraps a
// data key only for the owner it was made for.
const ContextKey = "tidegate:owner"

// Org is the owner of an org's app secrets; Tenant the owner of a tenant's webhook secrets.
func Org(name string) string    { return secretbox.OrgOwner(name) }
func Tenant(name string) string { return secretbox.TenantOwner(name) }

// DefaultRefresh is how long a Ring trusts what it read of an owner's data keys before it reads
// them again: a rotation made elsewhere reaches a warm function within it.
const DefaultRefresh = 5 * time.Minute

// Ring seals, opens and fingerprints owners' values under their data keys.
type Ring struct {
	kms     *kms.Client
	db      *dynamodb.Client
	table   string
	kmsKey  string // the KMS key (id, ARN or alias) new data keys are made under
	refresh time.Duration
	now     func() time.Time

	mu     sync.Mutex
	owners map[string]*owned
}

// owned is what a Ring has read of one owner's data keys.
type owned struct {
	read    time.Time
	records []record                  // sealing keys, oldest generation first
	print   *record                   // the fingerprint key, once made
	boxes   map[string]*secretbox.Box // by data key id, once unwrapped
	printer []byte                    // the fingerprint key, once unwrapped
}

// New returns a ring whose data keys live in table (the control table) and are made under
// kmsKey, a KMS key's id, ARN or alias.
func New(kmsClient *kms.Client, db *dynamodb.Client, table, kmsKey string) (*Ring, error) {
	if kmsKey == "" {
		return nil, errors.New("keyring: no KMS key to make data keys under")
	}
	return &Ring{kms: kmsClient, db: db, table: table, kmsKey: kmsKey, refresh: DefaultRefresh,
		now: time.Now, owners: map[string]*owned{}}, nil
}

// KMSKey is the KMS key new data keys are made under, as configured.
func (r *Ring) KMSKey() string { return r.kmsKey }

// Seal seals value for owner under the owner's current data key, bound to binding: it opens only
// for that owner and that binding.
func (r *Ring) Seal(ctx context.Context, owner, value, binding string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	box, _, err := r.current(ctx, owner)
	if err != nil {
		return "", err
	}
	return box.Seal(value, binding)
}

// Open opens what Seal made for owner with binding, under whichever of the owner's data keys
// sealed it. A value sealed for another owner, or under a key the owner does not have, does not
// open (secretbox.ErrOpen).
func (r *Ring) Open(ctx context.Context, owner, sealed, binding string) (string, error) {
	id, err := secretbox.SealedKeyID(sealed)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	box, err := r.box(ctx, owner, id)
	if err != nil {
		return "", err
	}
	return box.Open(sealed, binding)
}

// Current answers the id of owner's current data key, the one Seal uses, making it if the owner
// has none under the configured KMS key.
func (r *Ring) Current(ctx context.Context, owner string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, id, err := r.current(ctx, owner)
	return id, err
}

// Fingerprint is secretbox.Fingerprint of name and value under owner's fingerprint key: a data
// key of its own, made once and never rotated, so that a value's fingerprint stays the same
// across rotations of the sealing keys.
func (r *Ring) Fingerprint(ctx context.Context, owner, name, value string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, err := r.load(ctx, owner, false)
	if err != nil {
		return "", err
	}
	if o.printer != nil {
		return secretbox.Fingerprint(o.printer, name, value), nil
	}
	if o.print == nil {
		rec, plain, err := r.make(ctx, owner, fingerprintSK, 0)
		switch {
		case err == nil:
			o.print, o.printer = &rec, plain
		case errors.Is(err, errTaken):
			// Another process made it first: use what it made.
			if o, err = r.load(ctx, owner, true); err != nil {
				return "", err
			}
		default:
			return "", err
		}
	}
	if o.printer == nil {
		if o.print == nil {
			return "", fmt.Errorf("%s's fingerprint key was made elsewhere, yet cannot be read", owner)
		}
		if o.printer, err = r.unwrap(ctx, owner, *o.print); err != nil {
			return "", err
		}
	}
	return secretbox.Fingerprint(o.printer, name, value), nil
}

// Rotate makes owner a new data key under the configured KMS key: values sealed from now on use
// it; those sealed before still open. It answers the new key's id.
func (r *Ring) Rotate(ctx context.Context, owner string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, err := r.load(ctx, owner, true)
	if err != nil {
		return "", err
	}
	gen := nextGeneration(o)
	rec, plain, err := r.make(ctx, owner, sealSK(gen), gen)
	if errors.Is(err, errTaken) {
		return "", fmt.Errorf("%s's data key generation %d was made by another rotation at the same moment; its values use that one, so there is nothing more to do (run again to rotate once more)", owner, gen)
	}
	if err != nil {
		return "", err
	}
	return rec.KeyID, o.add(rec, plain)
}

// add keeps a sealing key just made, and its box.
func (o *owned) add(rec record, plain []byte) error {
	b, err := secretbox.New(plain)
	if err != nil {
		return err
	}
	o.records = append(o.records, rec)
	o.boxes[rec.KeyID] = b
	return nil
}

func nextGeneration(o *owned) int {
	if len(o.records) == 0 {
		return 1
	}
	return o.records[len(o.records)-1].Generation + 1
}

// current answers owner's newest sealing key, first making one when the owner has none or its
// newest was made under another KMS key than the configured one (the key was changed).
func (r *Ring) current(ctx context.Context, owner string) (*secretbox.Box, string, error) {
	o, err := r.load(ctx, owner, false)
	if err != nil {
		return nil, "", err
	}
	if n := len(o.records); n == 0 || o.records[n-1].MadeUnder != r.kmsKey {
		gen := nextGeneration(o)
		rec, plain, err := r.make(ctx, owner, sealSK(gen), gen)
		switch {
		case err == nil:
			if err := o.add(rec, plain); err != nil {
				return nil, "", err
			}
		case errors.Is(err, errTaken):
			// Another process made this generation first: use what it made.
			if o, err = r.load(ctx, owner, true); err != nil {
				return nil, "", err
			}
			if len(o.records) == 0 {
				return nil, "", fmt.Errorf("%s's data key generation %d was made elsewhere, yet cannot be read", owner, gen)
			}
		default:
			return nil, "", err
		}
	}
	latest := o.records[len(o.records)-1]
	box, err := r.box(ctx, owner, latest.KeyID)
	return box, latest.KeyID, err
}

// box answers the box holding owner's data key id, unwrapping the key on first use. An id the
// owner's records do not name is read for again once, in case another process just made it.
func (r *Ring) box(ctx context.Context, owner, id string) (*secretbox.Box, error) {
	o, err := r.load(ctx, owner, false)
	if err != nil {
		return nil, err
	}
	if b, ok := o.boxes[id]; ok {
		return b, nil
	}
	i := slices.IndexFunc(o.records, func(rec record) bool { return rec.KeyID == id })
	if i < 0 {
		if o, err = r.load(ctx, owner, true); err != nil {
			return nil, err
		}
		if i = slices.IndexFunc(o.records, func(rec record) bool { return rec.KeyID == id }); i < 0 {
			return nil, fmt.Errorf("%w: sealed under data key %s, which %s does not have", secretbox.ErrOpen, id, owner)
		}
	}
	raw, err := r.unwrap(ctx, owner, o.records[i])
	if err != nil {
		return nil, err
	}
	b, err := secretbox.New(raw)
	if err != nil {
		return nil, err
	}
	o.boxes[id] = b
	return b, nil
}

// unwrap asks KMS for rec's data key, with the owner's encryption context, and checks it is the
// key rec names.
func (r *Ring) unwrap(ctx context.Context, owner string, rec record) ([]byte, error) {
	out, err := r.kms.Decrypt(ctx, &kms.DecryptInput{
		CiphertextBlob:    rec.Wrapped,
		EncryptionContext: map[string]string{ContextKey: owner},
		KeyId:             aws.String(rec.KMSKeyARN),
	})
	if err != nil {
		return nil, fmt.Errorf("unwrapping %s's data key %s with KMS key %s (the function's role needs kms:Decrypt on it): %w", owner, rec.KeyID, rec.KMSKeyARN, err)
	}
	if secretbox.KeyID(out.Plaintext) != rec.KeyID {
		return nil, fmt.Errorf("%s's data key %s unwrapped to another key; its record was altered", owner, rec.KeyID)
	}
	return out.Plaintext, nil
}

// generate asks KMS for a new data key for owner under the configured KMS key.
func (r *Ring) generate(ctx context.Context, owner string) (plain []byte, rec record, err error) {
	out, err := r.kms.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId:             aws.String(r.kmsKey),
		NumberOfBytes:     aws.Int32(secretbox.KeySize),
		EncryptionContext: map[string]string{ContextKey: owner},
	})
	if err != nil {
		return nil, rec, fmt.Errorf("making a data key for %s under KMS key %s (the function's role needs kms:GenerateDataKey on it): %w", owner, r.kmsKey, err)
	}
	return out.Plaintext, record{
		KeyID: secretbox.KeyID(out.Plaintext), Wrapped: out.CiphertextBlob,
		KMSKeyARN: aws.ToString(out.KeyId), MadeUnder: r.kmsKey, CreatedAt: r.now().UTC(),
	}, nil
}
