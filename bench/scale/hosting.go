package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/apps"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/hosting"
	"github.com/tidegate/tidegate/shared/keyring"
	"github.com/tidegate/tidegate/shared/podspec"
)

// hosts makes a apps live, spread over the tenants as orgs, each on its registered host with its
// pod (as the hosted process and the beat would leave them: not measured), then measures a
// hosting beat with nothing to do, and one after 1% of the hosts' pods were deleted (as a lost
// node would), which revives each of them on a new host.
func (e *env) hosts(ctx context.Context, a int) ([]row, error) {
	name := fmt.Sprintf("h%d", a)
	t, drop, err := e.tables(ctx, name)
	if err != nil {
		return nil, err
	}
	defer drop()
	ns, dropNS, err := e.namespace(ctx, name)
	if err != nil {
		return nil, err
	}
	defer dropNS()
	h, err := e.hoster(ctx, t, ns)
	if err != nil {
		return nil, err
	}
	progress("making %d apps live", a)
	start := time.Now()
	if err := e.liveApps(ctx, h, t, ns, a); err != nil {
		return nil, err
	}
	progress("made live in %s", time.Since(start).Round(time.Millisecond))
	beat := func() error { return h.Beat(ctx) }
	if err := e.settle(ctx, beat); err != nil {
		return nil, err
	}
	var rows []row
	r, err := e.measure("hosting beat: nothing to do", "apps", a, beat)
	rows = append(rows, r)
	if err != nil {
		return rows, err
	}
	if err := e.dropHosts(ctx, ns, max(a/100, 1)); err != nil {
		return rows, err
	}
	r, err = e.measure("hosting beat: 1% of hosts lost", "apps", a, beat)
	return append(rows, r), err
}

// hoster is the hosting beat on tables t, its hosts in ns of the sandbox's cluster, its secrets
// sealed under a KMS key of its own in local-kms, its sources presigned for the sandbox's S3.
func (e *env) hoster(ctx context.Context, t dynamo.Tables, ns string) (*hosting.Hoster, error) {
	key, err := e.kms.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String("tidegate scale " + ns)})
	if err != nil {
		return nil, fmt.Errorf("making a KMS key: %w", err)
	}
	box, err := keyring.New(e.kms, e.db, t.Control, aws.ToString(key.KeyMetadata.Arn))
	if err != nil {
		return nil, err
	}
	return &hosting.Hoster{
		Region: east, Namespace: ns, Stack: t.Control, PublicURL: "http://127.0.0.1:1",
		Apps: dynamo.NewAppStore(e.db, t), Secrets: dynamo.NewSecretStore(e.db, t.Control), Box: box,
		Sources:  hosting.S3Sources{Presign: s3.NewPresignClient(e.s3), Bucket: ns, Prefix: "sources/"},
		Clusters: e.clusters, Log: e.log, Now: time.Now,
	}, nil
}

// live makes app of org live on its registered host with a pod, through the stores, as the
// upload, the beat and the host would: a release, the host's token, the pod, the host's
// registration, the app marked live. It answers the pod's UID. No org has secrets, so each org's
// digest is the empty set's.
func live(ctx context.Context, store *dynamo.AppStore, kc kubernetes.Interface, h *hosting.Hoster, ns, org, app string) (string, error) {
	sha := strings.Repeat("a", 64)
	now := time.Now()
	r, err := store.CreateRelease(ctx, org, apps.Release{App: app, SHA256: sha, Bytes: 10, CreatedAt: now})
	if err != nil {
		return "", err
	}
	digest, err := h.Secrets.Digest(ctx, org)
	if err != nil {
		return "", err
	}
	host := apps.HostName(org, app, r.Number, sha, digest)
	token, err := store.MintHostToken(ctx, org, app, host)
	if err != nil {
		return "", err
	}
	uid, err := hostPod(ctx, kc, h, ns, org, app, host, r.Number)
	if err != nil {
		return "", err
	}
	if _, _, err := store.Register(ctx, host, uid, token, now); err != nil {
		return "", err
	}
	return uid, store.MarkLive(ctx, org, app, host, r.Number, now)
}

// hostPod creates host's pod, as the beat would start it, and answers its UID.
func hostPod(ctx context.Context, kc kubernetes.Interface, h *hosting.Hoster, ns, org, app, host string, release int) (string, error) {
	l := podspec.Launch{Org: org, App: app, Host: host, Release: release, Namespace: ns, Stack: podspec.StackValue(h.Stack),
		SourcesURL: "https://sources.invalid/x", SourcesSHA256: strings.Repeat("a", 64), HostToken: "token",
		RegisterURL: "https://api.invalid/register"}
	pod, err := podspec.Pod(l)
	if err != nil {
		return "", err
	}
	created, err := kc.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return string(created.UID), nil
}

// dropHosts deletes n hosts' pods of ns at once, as the loss of their node would.
func (e *env) dropHosts(ctx context.Context, ns string, n int) error {
	l, err := e.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: podspec.Selector(), Limit: int64(n)})
	if err != nil {
		return err
	}
	zero := int64(0)
	for _, p := range l.Items {
		if err := e.kc.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			return fmt.Errorf("deleting host pod %s: %w", p.Name, err)
		}
	}
	return nil
}
