package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

const (
	// DynamoDB Local was measured ready in about 4 s; a JVM starting on a busy 2-core CI machine
	// gets fifteen times that before we call it stuck.
	dynamoDBStartTimeout = 60 * time.Second
	// fauxqs was measured ready in 0.4 s on Node 22.
	fauxqsStartTimeout = 20 * time.Second
)

// startDynamoDB runs DynamoDB Local in memory on a free port and records its endpoint.
//
// DynamoDB Local has no option to choose the address it listens on (its -help lists none, and its
// option constants have none), so it binds all interfaces; the endpoint we hand out is loopback.
func startDynamoDB(ctx context.Context, s *Sandbox) error {
	dir, err := installed("dynamodb-local")
	if err != nil {
		return err
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return fmt.Errorf("%w: java is not on PATH; run `make tools` (scripts/tools.sh) to install it", errNotInstalled)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	p, err := startProcess("dynamodb-local", dir, s.dir, nil, java,
		"-Djava.library.path=./DynamoDBLocal_lib", "-jar", "DynamoDBLocal.jar",
		"-inMemory", "-port", strconv.Itoa(port),
		// One database for every access key and region, so a process configured with other
		// credentials than AWSConfig's still sees the same tables.
		"-sharedDb",
		// The machine has no way out to AWS, and a sandbox has nothing to report.
		"-disableTelemetry",
	)
	if err != nil {
		return err
	}
	s.procs = append(s.procs, p)
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := p.waitReady(ctx, dynamoDBStartTimeout, httpReady(endpoint)); err != nil {
		return err
	}
	s.DynamoDBEndpoint = endpoint
	return nil
}

// startFauxqs runs fauxqs (SQS, SNS and S3 on one port) on Node 22, bound to loopback by the
// serve.mjs that scripts/tools-aws.sh wrote, and records its endpoint.
func startFauxqs(ctx context.Context, s *Sandbox) error {
	node, err := installed(filepath.Join("bin", "node22"))
	if err != nil {
		return err
	}
	serve, err := installed(filepath.Join("fauxqs", "serve.mjs"))
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	p, err := startProcess("fauxqs", filepath.Dir(serve), s.dir, nil, node,
		// fauxqs keeps its state in node:sqlite, which Node 22 flags as experimental at every start.
		"--disable-warning=ExperimentalWarning", serve, strconv.Itoa(port))
	if err != nil {
		return err
	}
	s.procs = append(s.procs, p)
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := p.waitReady(ctx, fauxqsStartTimeout, httpReady(endpoint)); err != nil {
		return err
	}
	s.AWSEndpoint = endpoint
	return nil
}
