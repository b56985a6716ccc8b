package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/awscalls"
	"github.com/tidegate/tidegate/shared/dev/kubemeter"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/kube/typed"
)

// The two regions, both on the sandbox's one cluster.
const (
	east = "us-east-1"
	west = "us-west-2"
)

// env is the run's clients, every one counted: DynamoDB and SQS by awscalls' middleware,
// Kubernetes through the counting proxy.
type env struct {
	counter  *awscalls.Counter
	proxy    *kubemeter.Proxy
	db       *dynamodb.Client
	queue    *sqs.Client
	kms      *kms.Client
	s3       *s3.Client
	clusters *typed.Clusters
	kc       kubernetes.Interface
	log      *slog.Logger
	prefix   string
}

func newEnv(ctx context.Context, st sandbox.State, proxy *kubemeter.Proxy) (*env, error) {
	e := &env{counter: &awscalls.Counter{}, proxy: proxy, prefix: fmt.Sprintf("scale-%d", os.Getpid()),
		log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
	cfg := st.AWSConfig()
	e.counter.Instrument(&cfg)
	e.db = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(st.DynamoDBEndpoint) })
	e.queue = sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(st.AWSEndpoint) })
	e.kms = kms.NewFromConfig(cfg, func(o *kms.Options) { o.BaseEndpoint = aws.String(st.KMSEndpoint) })
	// Path-style addressing keeps the bucket out of the host name, which on loopback would not resolve.
	e.s3 = s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = aws.String(st.AWSEndpoint); o.UsePathStyle = true })
	kcs, err := kube.New(config.Config{Regions: map[string]string{east: "sandbox", west: "sandbox"}, Kubeconfig: proxy.Kubeconfig}, aws.Config{})
	if err != nil {
		return nil, err
	}
	e.clusters = typed.New(kcs)
	if e.kc, err = e.clusters.Client(ctx, east); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *env) close() {}

// tables creates a fresh set of tables named for what they hold, and answers a function that
// deletes them.
func (e *env) tables(ctx context.Context, name string) (dynamo.Tables, func(), error) {
	base := e.prefix + "-" + name
	t := dynamo.Tables{Jobs: base + "-jobs", Events: base + "-events", Control: base + "-control"}
	if err := dynamo.CreateTables(ctx, e.db, t); err != nil {
		return t, nil, fmt.Errorf("creating tables: %w", err)
	}
	return t, func() {
		for _, s := range t.Specs() {
			_, _ = e.db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.Name)})
		}
	}, nil
}

// namespaceGone bounds the wait for a namespace of thousands of pods to be deleted.
const namespaceGone = 10 * time.Minute

// namespace creates a namespace for the jobs of one size, and answers a function that deletes it
// with everything in it and waits until it is gone: a namespace of thousands of pods being
// deleted keeps the apiserver busy enough to time out the next size's LISTs.
func (e *env) namespace(ctx context.Context, name string) (string, func(), error) {
	ns := e.prefix + "-" + name
	_, err := e.kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		return "", nil, fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return ns, func() {
		ctx := context.Background()
		if err := e.kc.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			return
		}
		progress("deleting namespace %s", ns)
		for deadline := time.Now().Add(namespaceGone); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
			if _, err := e.kc.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				return
			}
		}
		progress("namespace %s still not gone after %s", ns, namespaceGone)
	}, nil
}

// row is one operation at one size.
type row struct {
	op    string // what ran
	input string // what grows: "queued", "active", "apps", "webhooks"
	n     int    // its size
	took  time.Duration
	// read and write are the DynamoDB capacity units consumed.
	read, write float64
	aws, kube   int // calls
	// queueItems are the items read of the queues' partitions (queue#…): the queued jobs read.
	queueItems int
}

// measure runs f once, counting what it costs.
func (e *env) measure(op, input string, n int, f func() error) (row, error) {
	e.counter.Reset()
	e.proxy.Counts(true)
	start := time.Now()
	err := f()
	r := row{op: op, input: input, n: n, took: time.Since(start)}
	for _, t := range e.counter.Calls() {
		r.aws += t.Calls
		r.read += t.ReadUnits
		r.write += t.WriteUnits
	}
	for _, c := range e.proxy.Counts(true) {
		r.kube += c
	}
	for pk, items := range e.counter.Items() {
		if strings.HasPrefix(pk, "queue#") {
			r.queueItems += items
		}
	}
	progress("%s over %d %s: %s, %.1f RRU, %.1f WRU, %d AWS calls, %d Kubernetes calls, %d queued items read",
		op, n, input, r.took.Round(time.Millisecond), r.read, r.write, r.aws, r.kube, r.queueItems)
	return r, err
}
