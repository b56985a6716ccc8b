package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/spotprices"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/handlers/apihandler"
	"github.com/tidegate/tidegate/shared/handlers/dispatchhandler"
	"github.com/tidegate/tidegate/shared/handlers/reconcilehandler"
	"github.com/tidegate/tidegate/shared/handlers/webhookhandler"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/kube/typed"
	"github.com/tidegate/tidegate/shared/secretbox"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// shutdownGrace bounds how long in-flight requests get when the stack stops.
const shutdownGrace = 5 * time.Second

// devCredentials sign requests to the stand-ins, which accept any.
var devCredentials = credentials.NewStaticCredentialsProvider("tidegate", "tidegate", "")

// Run brings the whole stack up, serves until ctx ends, then stops everything it started. say
// receives progress lines for the person waiting; logs go to log.
func Run(ctx context.Context, opt Options, say io.Writer, log *slog.Logger) error {
	if err := opt.Validate(); err != nil {
		return err
	}
	if opt.Dir == "" {
		opt.Dir = DefaultDir()
	}
	if err := os.MkdirAll(opt.Dir, 0o700); err != nil {
		return fmt.Errorf("making dev folder: %w", err)
	}
	lk, err := takeLock(opt.Dir)
	if err != nil {
		return err
	}
	defer lk.release()
	// Take the API's port before the slow start, so a clash is reported at once.
	ln, err := net.Listen("tcp", opt.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s (is something else using it? choose another with --addr): %w", opt.Addr, err)
	}
	defer ln.Close()

	start := time.Now()
	sb, stopStandins, err := standins(ctx, opt, say)
	if err != nil {
		return err
	}
	defer stopStandins()
	n := namesFor(opt.Prefix)
	kubeconfig := sb.Kubeconfig
	if opt.Kubeconfig != "" {
		kubeconfig = opt.Kubeconfig
	}
	// Stacks sharing stand-ins (tests) each host their apps in a namespace of their own.
	appsNamespace := config.DefaultAppsNamespace
	if opt.Prefix != "" {
		appsNamespace = opt.Prefix + "-apps"
	}
	for _, ns := range append(slices.Clone(DevNamespaces), appsNamespace) {
		if err := sandbox.EnsureNamespace(ctx, kubeconfig, ns); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}

	book, err := spotprices.OpenFile(filepath.Join(opt.Dir, "prices.json"))
	if err != nil {
		return err
	}
	priceLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening for the spot price endpoint: %w", err)
	}
	pricesURL := "http://" + priceLn.Addr().String()

	cfg := config.Config{
		JobsTable: n.tables.Jobs, EventsTable: n.tables.Events, ControlTable: n.tables.Control,
		SourcesBucket:        n.bucket,
		Regions:              map[string]string{},
		HostingRegion:        DevRegions[0],
		AppsNamespace:        appsNamespace,
		PublicURL:            "http://" + ln.Addr().String(),
		Kubeconfig:           kubeconfig,
		WebhooksAllowPrivate: opt.WebhooksAllowPrivate,
		Endpoints: config.Endpoints{
			DynamoDB: sb.DynamoDBEndpoint, SQS: sb.AWSEndpoint, S3: sb.AWSEndpoint, EC2: pricesURL,
		},
	}
	for _, r := range DevRegions {
		cfg.Regions[r] = "sandbox"
	}
	// Orgs' secrets last only as long as this run's tables, so a fresh key each run loses nothing.
	cfg.SecretsKey = secretbox.NewKey()
	if cfg.RegionCapacity, err = config.ParseCapacity(opt.RegionCapacity); err != nil {
		return err
	}
	awsCfg := aws.Config{Region: DevRegions[0], Credentials: devCredentials}
	clients := handlers.NewClients(awsCfg, cfg)
	clusters, err := kube.New(cfg, awsCfg)
	if err != nil {
		return err
	}
	prices := dispatchhandler.Prices(cfg, clients)
	// A price set by hand is seen by the next beat, not a minute later as in AWS.
	prices.TTL = opt.Beat
	fmt.Fprintln(say, "tidegate dev: creating tables, queues, bucket and the dev tenant")
	res, err := createResources(ctx, clients, n)
	if err != nil {
		return err
	}
	if opt.Standins != nil {
		defer removeResources(clients, n, res)
	}
	cfg.DispatchQueueURL, cfg.WebhookQueueURL = res.dispatch.url, res.webhook.url
	key, err := devTenant(ctx, clients, n.tables.Control, opt.APIKey)
	if err != nil {
		return err
	}

	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); wg.Wait() }()
	serve := func(name string, l net.Listener, h http.Handler) {
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		wg.Go(func() {
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("server stopped", "server", name, "err", err)
				cancel()
			}
		})
		wg.Go(func() {
			<-ctx.Done()
			sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
			defer scancel()
			_ = srv.Shutdown(sctx)
		})
	}
	// One set of typed clients for the API and the beat; dispatch uses the dynamic ones alone.
	typedClusters := typed.New(clusters)
	api, err := apihandler.New(cfg, clients, typedClusters, log, nil)
	if err != nil {
		return err
	}
	serve("api", ln, api)
	serve("prices", priceLn, book.Handler())
	wg.Go(func() {
		pollQueue(ctx, log, clients.SQS, res.dispatch.url, res.dispatch.arn, dispatchhandler.New(cfg, clients, clusters, prices, log))
	})
	wg.Go(func() {
		pollQueue(ctx, log, clients.SQS, res.webhook.url, res.webhook.arn, webhookhandler.New(cfg, clients, log))
	})
	wg.Go(func() { beat(ctx, log, opt.Beat, reconcilehandler.New(cfg, clients, typedClusters, log).HandleBeat) })
	if opt.RegisterHosts {
		kc, err := sandbox.KubeClient(kubeconfig)
		if err != nil {
			return err
		}
		r := newRegistrar(kc, appsNamespace, opt.NeverRegister, log)
		wg.Go(func() { r.run(ctx, max(opt.Beat/2, minBeat)) })
	}

	st := State{
		PID: os.Getpid(), URL: "http://" + ln.Addr().String(), APIKey: key, Kubeconfig: kubeconfig,
		PricesURL: pricesURL, Env: functionEnv(cfg),
	}
	if err := st.write(opt.Dir); err != nil {
		return err
	}
	defer os.Remove(statePath(opt.Dir))
	if opt.Ready != nil {
		opt.Ready(st)
	}
	fmt.Fprintf(say, banner, time.Since(start).Round(100*time.Millisecond), st.URL, key, kubeconfig)
	<-ctx.Done()
	fmt.Fprintln(say, "tidegate dev: stopping")
	return nil
}

// banner is what a person sees once the stack is up.
const banner = `tidegate dev: ready in %s
  API       %s   (try: curl -s $TIDEGATE_URL/healthz)
  API key   %s   (tenant "dev", namespaces team-a and team-b)
  cluster   KUBECONFIG=%s
  In another shell:  eval "$(./bin/tidegate dev env)"
  Ctrl-C stops everything.
`

// devTenant makes the dev tenant and its key: the fixed one if given, else a fresh one.
func devTenant(ctx context.Context, c handlers.Clients, controlTable, fixed string) (string, error) {
	store := dynamo.NewTenantStore(c.DynamoDB, controlTable)
	now := time.Now()
	t := tenancy.Tenant{Name: DevTenant, Org: DevOrg, Namespaces: DevNamespaces, Role: tenancy.RoleAdmin, CreatedAt: now.UTC()}
	if err := store.PutTenant(ctx, t); err != nil {
		return "", err
	}
	key := strings.TrimSpace(fixed)
	if key == "" {
		var err error
		if key, err = tenancy.NewKey(); err != nil {
			return "", err
		}
	}
	if err := store.AddKey(ctx, DevTenant, key, now); err != nil {
		return "", err
	}
	return key, nil
}

// functionEnv is the environment a function would see, so `tidegate dev env` lets the admin
// commands (and anything else built on config.FromEnv) reach the dev stack.
func functionEnv(cfg config.Config) map[string]string {
	regions := make([]string, 0, len(cfg.Regions))
	for _, r := range cfg.RegionNames() {
		regions = append(regions, r+"="+cfg.Regions[r])
	}
	return map[string]string{
		config.EnvJobsTable: cfg.JobsTable, config.EnvEventsTable: cfg.EventsTable, config.EnvControlTable: cfg.ControlTable,
		config.EnvDispatchQueueURL: cfg.DispatchQueueURL, config.EnvWebhookQueueURL: cfg.WebhookQueueURL,
		config.EnvSourcesBucket: cfg.SourcesBucket, config.EnvRegions: strings.Join(regions, ","),
		config.EnvHostingRegion: cfg.HostingRegion, config.EnvRegionCapacity: capacityString(cfg.RegionCapacity), config.EnvKubeconfig: cfg.Kubeconfig,
		config.EnvAppsNamespace: cfg.AppsNamespace, config.EnvPublicURL: cfg.PublicURL,
		config.EnvDynamoDBEndpoint: cfg.Endpoints.DynamoDB, config.EnvSQSEndpoint: cfg.Endpoints.SQS,
		config.EnvS3Endpoint: cfg.Endpoints.S3, config.EnvEC2Endpoint: cfg.Endpoints.EC2,
		"AWS_REGION": DevRegions[0], "AWS_ACCESS_KEY_ID": "tidegate", "AWS_SECRET_ACCESS_KEY": "tidegate",
	}
}

func capacityString(c map[string]int) string {
	var parts []string
	for _, r := range DevRegions {
		if n, ok := c[r]; ok {
			parts = append(parts, fmt.Sprintf("%s=%d", r, n))
		}
	}
	return strings.Join(parts, ",")
}
