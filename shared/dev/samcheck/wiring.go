package samcheck

import (
	"fmt"
	"time"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dynamo"
)

// This file is Tidegate's wiring as the code expects it: which functions exist, which queue wakes
// which function, what each function's role may reach, the tables' schema and the open routes.
// Change it together with template.yaml.

// Resource types Check looks for.
const (
	typeFunction     = "AWS::Serverless::Function"
	typeHttpApi      = "AWS::Serverless::HttpApi"
	typeQueue        = "AWS::SQS::Queue"
	typeTable        = "AWS::DynamoDB::Table"
	typeBucket       = "AWS::S3::Bucket"
	typeBucketPolicy = "AWS::S3::BucketPolicy"
	typeRole         = "AWS::IAM::Role"
	typeKMSKey       = "AWS::KMS::Key"
)

// functions are the template's functions; the roles and log groups each may reach are in access.
var functions = []string{"ApiFunction", "DispatchFunction", "ReconcileFunction", "WebhookFunction"}

// consumers maps each work queue to the one function that drains it.
var consumers = map[string]string{
	"DispatchQueue": "DispatchFunction",
	"WebhookQueue":  "WebhookFunction",
}

// access is, per function, every resource or parameter its role's Allow statements name: no
// fewer (the code would be refused) and no more (least privilege). Conditions are not counted.
var access = map[string][]string{
	"ApiFunction": {"ApiLogGroup", "JobsTable", "EventsTable", "ControlTable",
		"DispatchQueue", "WebhookQueue", "SourcesBucket", "ClusterArns", secretsKMSKey},
	"DispatchFunction": {"DispatchLogGroup", "JobsTable", "EventsTable", "ControlTable",
		"DispatchQueue", "WebhookQueue", "ClusterArns"},
	"ReconcileFunction": {"ReconcileLogGroup", "JobsTable", "EventsTable", "ControlTable",
		"DispatchQueue", "WebhookQueue", "SourcesBucket", "ClusterArns", secretsKMSKey},
	"WebhookFunction": {"WebhookLogGroup", "EventsTable", "ControlTable", "WebhookQueue", secretsKMSKey},
}

// secretsKMSKey is the KMS key that wraps the data keys sealing secrets (shared/keyring).
const secretsKMSKey = "SecretsKmsKey"

// kmsUsers are the functions with a keyring, and the KMS actions each calls on secretsKMSKey:
// the API makes data keys and unwraps them; the beat and the webhook function only open.
var kmsUsers = map[string][]string{
	"ApiFunction":       {"kms:Decrypt", "kms:GenerateDataKey"},
	"ReconcileFunction": {"kms:Decrypt"},
	"WebhookFunction":   {"kms:Decrypt"},
}

// resourceLessActions have no resource-level permissions: IAM matches them only against "*"
// (the Service Authorization Reference lists no resource type for them). An Allow on "*" is
// accepted for these alone, and only when confined to regions with aws:RequestedRegion.
var resourceLessActions = map[string]bool{
	"ec2:DescribeSpotPriceHistory": true,
}

// tables is the DynamoDB schema shared/dynamo writes in Go: every table is keyed pk/sk, and these
// are its global secondary indexes, each keyed <index>pk/<index>sk and projecting all attributes.
var tables = map[string][]string{
	"JobsTable":    {"gsi1", "gsi2", "gsi3"},
	"EventsTable":  {"gsi1"},
	"ControlTable": {"gsi1"},
}

// includes names the indexes that project only some attributes, and which; every other index
// projects ALL. shared/dynamo's Specs say the same (TestTablesMatchSharedDynamo).
var includes = map[string]map[string][]string{
	"JobsTable": {"gsi2": dynamo.QueueIndexAttributes},
}

// ttlAttribute is the attribute holding the epoch second an item may be deleted at.
const ttlAttribute = "expires_at"

// sourcesBucket holds hosted apps' release sources.
const sourcesBucket = "SourcesBucket"

// minReceives is the fewest receives before a message dead-letters: enough to ride out a
// cluster or endpoint that is briefly unreachable.
const minReceives = 5

// visibilityFactor is AWS's guidance for an SQS event source: a visibility timeout of at least six
// times the function's timeout, so that a batch Lambda retries after throttling is not handed out
// again while the first attempt may still run.
const visibilityFactor = 6

// env maps each setting shared/config requires to the template reference that must supply it.
var env = map[string]string{
	config.EnvJobsTable:        refString("JobsTable"),
	config.EnvEventsTable:      refString("EventsTable"),
	config.EnvControlTable:     refString("ControlTable"),
	config.EnvDispatchQueueURL: refString("DispatchQueue"), // Ref of a queue is its URL
	config.EnvWebhookQueueURL:  refString("WebhookQueue"),
	config.EnvSourcesBucket:    refString(sourcesBucket),
	config.EnvRegions:          refString("Regions"),
	config.EnvHostingRegion:    refString("HostingRegion"),
	config.EnvRegionCapacity:   refString("RegionCapacity"),
}

// devOnlyEnv are settings for `tidegate dev` and tests; in AWS they would point the functions
// at stand-ins or at a kubeconfig that is not there.
var devOnlyEnv = []string{
	config.EnvSourcesPrefix, config.EnvKubeconfig,
	config.EnvDynamoDBEndpoint, config.EnvSQSEndpoint, config.EnvS3Endpoint,
	config.EnvEC2Endpoint, config.EnvSTSEndpoint, config.EnvEKSEndpoint, config.EnvKMSEndpoint,
}

// reconciler is the function the beat runs.
const reconciler = "ReconcileFunction"

// beatSchedule is config.BeatInterval as an EventBridge rate expression.
func beatSchedule() string {
	m := int(config.BeatInterval / time.Minute)
	if m == 1 {
		return "rate(1 minute)"
	}
	return fmt.Sprintf("rate(%d minutes)", m)
}

// route is an HTTP API route key, "METHOD /path".
type route string

// openRoutes are the only routes reachable without an IAM signature: the two a load balancer or a
// client generator reads, and a host's registration, which a hosted app makes with the host token
// in its environment (it has no AWS credentials) and the API checks itself.
var openRoutes = []route{"GET /healthz", "GET /openapi.json", "POST /api/v1/hosts/{host}/register"}

// apiFunction serves every HTTP API route; catchAll is its route for everything not open.
const (
	apiFunction = "ApiFunction"
	catchAll    = route("ANY /{proxy+}")
)
