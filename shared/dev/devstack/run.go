package devstack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dev/sandbox"
	"github.com/tidegate/tidegate/shared/dev/spotprices"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/handlers"
	"github.com/tidegate/tidegate/shared/kube"
	"github.com/tidegate/tidegate/shared/metrics"
	"github.com/tidegate/tidegate/shared/tenancy"
)

// devCredentials sign requests to the stand-ins, which accept any.
var devCredentials = credentials.NewStaticCredentialsProvider("tidegate", "tidegate", "")

// Run brings the whole stack up, serves until ctx ends, then stops everything it started. say
// receives progress lines for the person waiting; logs go to log.
func Run(ctx context.Context, opt Options, say io.Writer, log *slog.Logger) error {
	if err := opt.Validate(); err != nil {
		return err
	}
	if set := taken(opt); len(set) > 0 {
		fmt.Fprintf(say, "tidegate dev: the deployment's settings from the environment: %s\n", strings.Join(set, " "))
	}
	for _, note := range overrides(opt) {
		fmt.Fprintln(say, "tidegate dev: "+note)
		log.Info("dev setting in place of the deployment's", "note", note)
	}
	if err := sayFlavors(opt, say); err != nil {
		return err
	}
	if opt.Dir == "" {
		opt.Dir = DefaultDir()
	}
	lk, err := claimDir(opt.Dir)
	if err != nil {
		return err
	}
	defer lk.release()
	mlog, err := openMetricsLog(opt.Dir, metricsLimit)
	if err != nil {
		return err
	}
	// Deferred before the workers' stop, so it runs after: no function writes to a closed file.
	defer mlog.Close()
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
	pl, appsNamespace, err := devCluster(ctx, opt, sb)
	if err != nil {
		return err
	}
	book, priceLn, err := openPrices(opt.Dir)
	if err != nil {
		return err
	}
	n := namesFor(opt.Prefix)
	pricesURL := "http://" + priceLn.Addr().String()
	cfg, err := devConfig(opt, n, sb, pl, appsNamespace, "http://"+ln.Addr().String(), pricesURL)
	if err != nil {
		return err
	}
	// An operator's own cluster (--kubeconfig) has its own nodes; the sandbox is given the flavors'.
	if opt.Kubeconfig == "" {
		if err := seedFlavorNodes(ctx, opt, cfg, pl); err != nil {
			return err
		}
	}

	fns, key, remove, err := provision(ctx, opt, cfg, n, metrics.NewRecorder(mlog, time.Now), say)
	if err != nil {
		return err
	}
	defer remove()

	ctx, cancel := context.WithCancel(ctx)
	ws := &workers{cancel: cancel, log: log}
	defer ws.stop()
	if err := fns.start(ctx, ws, opt, ln, priceLn, book, say); err != nil {
		return err
	}
	st := State{
		PID: os.Getpid(), URL: "http://" + ln.Addr().String(), APIKey: key, Kubeconfig: pl.kubeconfig, Clusters: pl.clusters(),
		PricesURL: pricesURL, Env: functionEnv(fns.cfg),
	}
	return advertise(ctx, opt, st, say, start)
}

// claimDir makes the dev folder and takes its lock, so a second stack started over the same
// folder stops at once and says which one holds it.
func claimDir(dir string) (*lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making dev folder: %w", err)
	}
	return takeLock(dir)
}

// openPrices opens the spot price book kept in dir and a loopback listener for the endpoint that
// serves it, which stands in for EC2's price history.
func openPrices(dir string) (*spotprices.Book, net.Listener, error) {
	book, err := spotprices.OpenFile(filepath.Join(dir, "prices.json"))
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("listening for the spot price endpoint: %w", err)
	}
	return book, ln, nil
}

// devConfig is the functions' configuration on the stand-ins sb, for resources named n: the
// tunables opt.settings reads, each dev region on its cluster as pl places it, the API at
// publicURL, EC2's prices at pricesURL. The queues' URLs are set once the queues exist.
func devConfig(opt Options, n names, sb sandbox.State, pl placement, appsNamespace, publicURL, pricesURL string) (config.Config, error) {
	cfg, err := opt.settings()
	if err != nil {
		return config.Config{}, err
	}
	cfg.JobsTable, cfg.EventsTable, cfg.ControlTable = n.tables.Jobs, n.tables.Events, n.tables.Control
	cfg.SourcesBucket = n.bucket
	// Checkpoints go under each tenant's prefix of the same bucket: s3://BUCKET/TENANT/JOB_ID/.
	cfg.CheckpointBucket = n.bucket
	cfg.Regions = pl.regionNames()
	cfg.HostingRegion = hostingRegion
	cfg.AppsNamespace = appsNamespace
	cfg.Stack = n.tables.Control // as config.Parse names a deployment by default
	cfg.PublicURL = publicURL
	cfg.Kubeconfig = pl.kubeconfig
	cfg.WebhooksAllowPrivate = opt.WebhooksAllowPrivate
	// Each beat watches until shortly before the next, as in AWS, whatever --beat is.
	cfg.Watch = config.WatchFor(opt.Beat)
	// The sandbox's spot and on-demand nodes carry this label.
	cfg.CapacityTypeLabel = sandbox.CapacityTypeLabel
	cfg.Endpoints = config.Endpoints{
		DynamoDB: sb.DynamoDBEndpoint, SQS: sb.AWSEndpoint, S3: sb.AWSEndpoint, EC2: pricesURL,
		KMS: sb.KMSEndpoint,
	}
	return cfg, nil
}

// provision connects the functions configured by cfg to the stand-ins and makes what they need
// there: the tables, queues and bucket named by n, and the dev tenant, whose API key it answers.
// The functions' config has the queues' URLs; their metrics go to rec. remove deletes what it made when the stand-ins are
// shared (opt.Standins), so they are left as found; stand-ins of the stack's own go with it.
func provision(ctx context.Context, opt Options, cfg config.Config, n names, rec *metrics.Recorder, say io.Writer) (fns functions, key string, remove func(), err error) {
	awsCfg := aws.Config{Region: DevRegions[0], Credentials: devCredentials}
	if opt.Meter != nil {
		opt.Meter.Instrument(&awsCfg)
	}
	clients := handlers.NewClients(awsCfg, cfg)
	clients.Metrics = rec
	clusters, err := kube.New(cfg, awsCfg)
	if err != nil {
		return fns, "", nil, err
	}
	fmt.Fprintln(say, "tidegate dev: creating a KMS key, tables, queues, bucket and the dev tenant")
	if cfg.KMSKey, err = devKMSKey(ctx, awsCfg, cfg.Endpoints.KMS); err != nil {
		return fns, "", nil, err
	}
	res, err := createResources(ctx, clients, n)
	if err != nil {
		return fns, "", nil, err
	}
	remove = func() {}
	if opt.Standins != nil {
		remove = func() { removeResources(clients, n, res) }
	}
	cfg.DispatchQueueURL, cfg.WebhookQueueURL = res.dispatch.url, res.webhook.url
	if key, err = devTenant(ctx, clients, n.tables.Control, opt.APIKey); err != nil {
		remove()
		return fns, "", nil, err
	}
	return functions{cfg: cfg, clients: clients, clusters: clusters, queues: res}, key, remove, nil
}

// advertise makes the running stack known until ctx ends: its state to other commands, through
// the state file, which it takes back at the end; to whoever started it, through opt.Ready; and to
// the person waiting, with how long the start took and how to reach it.
func advertise(ctx context.Context, opt Options, st State, say io.Writer, start time.Time) error {
	if err := st.write(opt.Dir); err != nil {
		return err
	}
	defer os.Remove(statePath(opt.Dir))
	if opt.Ready != nil {
		opt.Ready(st)
	}
	fmt.Fprintf(say, banner, time.Since(start).Round(100*time.Millisecond), st.URL, st.URL+"/", st.APIKey, clusterLines(st))
	<-ctx.Done()
	fmt.Fprintln(say, "tidegate dev: stopping")
	return nil
}

// banner is what a person sees once the stack is up.
const banner = `tidegate dev: ready in %s
  API       %s   (try: curl -s $TIDEGATE_URL/healthz)
  console   %s   (open it in a browser and sign in with the API key)
  API key   %s   (tenant "dev", namespaces team-a and team-b)
%s  In another shell:  eval "$(./bin/tidegate dev env)"
  Ctrl-C stops everything.
`

// devTenant makes the dev tenant and its key: the fixed one if given, else a fresh one.
func devTenant(ctx context.Context, c handlers.Clients, controlTable, fixed string) (string, error) {
	store := dynamo.NewTenantStore(c.DynamoDB, controlTable)
	now := time.Now()
	t := tenancy.Tenant{Name: DevTenant, Org: DevOrg, Namespaces: DevNamespaces, Role: tenancy.RoleAdmin, Operator: true, CreatedAt: now.UTC()}
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
		config.EnvSourcesBucket: cfg.SourcesBucket, config.EnvCheckpointBucket: cfg.CheckpointBucket, config.EnvRegions: strings.Join(regions, ","),
		config.EnvHostingRegion: cfg.HostingRegion, config.EnvRegionCapacity: capacityString(cfg.RegionCapacity), config.EnvKubeconfig: cfg.Kubeconfig,
		config.EnvAppsNamespace: cfg.AppsNamespace, config.EnvStack: cfg.Stack, config.EnvPublicURL: cfg.PublicURL,
		config.EnvDynamoDBEndpoint: cfg.Endpoints.DynamoDB, config.EnvSQSEndpoint: cfg.Endpoints.SQS,
		config.EnvS3Endpoint: cfg.Endpoints.S3, config.EnvEC2Endpoint: cfg.Endpoints.EC2,
		config.EnvKMSKey: cfg.KMSKey, config.EnvKMSEndpoint: cfg.Endpoints.KMS, config.EnvCapacityTypeLabel: cfg.CapacityTypeLabel,
		config.EnvFlavors: cfg.Flavors, "AWS_REGION": DevRegions[0], "AWS_ACCESS_KEY_ID": "tidegate", "AWS_SECRET_ACCESS_KEY": "tidegate",
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
