package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

const (
	// local-kms is a Go binary that opens a LevelDB folder: ready well under a second; a busy
	// 2-core CI machine gets forty times that.
	kmsStartTimeout = 20 * time.Second
	// sandboxAccount is the account local-kms puts in the ARNs of the keys it makes.
	sandboxAccount = "111122223333"
)

// startKMS runs local-kms on a free port, keeping its keys in the sandbox's folder, and records
// its endpoint.
//
// local-kms has no setting for the address it listens on (its settings are PORT, KMS_DATA_PATH,
// KMS_ACCOUNT_ID, KMS_REGION and a seeding file), so it binds all interfaces, like DynamoDB Local;
// the endpoint we hand out is loopback.
func startKMS(ctx context.Context, s *Sandbox) error {
	bin, err := installed(filepath.Join("bin", "local-kms"))
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	data := filepath.Join(s.dir, "kms")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return fmt.Errorf("making local-kms's data folder: %w", err)
	}
	env := []string{
		"PORT=" + strconv.Itoa(port),
		"KMS_DATA_PATH=" + data,
		"KMS_ACCOUNT_ID=" + sandboxAccount,
		// The keys' ARNs name the region the SDK clients are configured with.
		"KMS_REGION=" + sandboxRegion,
		// A seeding file left in the environment would make keys this sandbox did not ask for.
		"KMS_SEED_PATH=" + filepath.Join(data, "no-seed.yaml"),
	}
	p, err := startProcess("local-kms", s.dir, s.dir, env, bin)
	if err != nil {
		return err
	}
	s.procs = append(s.procs, p)
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := p.waitReady(ctx, kmsStartTimeout, httpReady(endpoint)); err != nil {
		return err
	}
	s.KMSEndpoint = endpoint
	return nil
}
