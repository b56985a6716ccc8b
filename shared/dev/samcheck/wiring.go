package samcheck

import (
	"fmt"
	"time"

	"github.com/tidegate/tidegate/shared/config"
	"github.com/tidegate/tidegate/shared/dynamo"
	"github.com/tidegate/tidegate/shared/httpapi"
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
	typeWebACL       = "AWS::WAFv2::WebACL"
	typeDistribution = "AWS::CloudFront::Distribution"
)

// functions are the template's functions; the roles and log groups each may reach are in access.
var functions = []string{"ApiFunction", "DispatchFunction", "ReconcileFunction", "WebhookFunction", "AuthorizerFunction"}

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
	// The key authorizer reads keys (and their tenants) and nothing else: see actions.
	"AuthorizerFunction": {"AuthorizerLogGroup", "ControlTable"},
}

// actions bounds, for the functions named, every action their roles may allow: the key
// authorizer answers every key caller's first request, and reading is all it needs.
var actions = map[string][]string{
	"AuthorizerFunction": {"logs:CreateLogStream", "logs:PutLogEvents", "dynamodb:GetItem"},
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
	"JobsTable":    {"gsi1", "gsi2", "gsi3", "gsi4", "gsi5"},
	"EventsTable":  {"gsi1"},
	"ControlTable": {"gsi1"},
}

// includes names the indexes that project only some attributes, and which; every other index
// projects ALL. shared/dynamo's Specs say the same (TestTablesMatchSharedDynamo).
var includes = map[string]map[string][]string{
	"JobsTable": {"gsi2": dynamo.QueueIndexAttributes, "gsi5": dynamo.ReleaseIndexAttributes},
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
	config.EnvStack:            refString("AWS::StackName"), // hosts carry it: see config.Stack
	config.EnvRegionCapacity:   refString("RegionCapacity"),
	// The API's queue stats and the drain must agree on whether a long-running job holds a slot.
	config.EnvLongRunningHoldsSlot: refString("LongRunningHoldsSlot"),
	config.EnvLongRunningPerTenant: refString("LongRunningPerTenant"),
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

// httpAPI is how one HTTP API lets callers in: every route with its authorizer but the open ones.
type httpAPI struct {
	authorizer string  // AWS_IAM, or the name of the API's Lambda authorizer
	open       []route // the only routes reachable without credentials
}

// apis are the HTTP APIs, one per kind of caller, since a route has exactly one authorizer:
// HttpApi's callers sign with SigV4 and API Gateway checks the signature; KeyApi's send an API key,
// which keyAuthorizer checks before the API function runs (and the function again). Both open the
// two routes a load balancer or a client generator reads; HttpApi also a host's registration,
// which a hosted app makes with the host token in its environment (it has no AWS credentials) and
// the API checks itself. KeyApi also opens the web console's page and files (shared/console),
// which hold nothing of a tenant's: a browser signs in there with a key, which it then sends to
// the API's routes like any other key caller (a browser cannot sign with SigV4).
var apis = map[string]httpAPI{
	"HttpApi": {authorizer: iamAuthorizer, open: []route{"GET /healthz", "GET /openapi.json", "POST /api/v1/hosts/{host}/register"}},
	"KeyApi":  {authorizer: keyAuthorizer, open: []route{"GET /healthz", "GET /openapi.json", "GET /", "GET /console/{file}"}},
}

// apiFunction serves every HTTP API route; catchAll is its route for everything not open.
const (
	apiFunction = "ApiFunction"
	catchAll    = route("ANY /{proxy+}")
)

// keyAuthorizer is KeyApi's Lambda authorizer, answered by authorizerFunction
// (shared/handlers/authorizerhandler) in payload format 2.0 with simple responses, asked once per
// Authorization header value and ReauthorizeEvery seconds.
const (
	keyAuthorizer      = "KeyAuthorizer"
	authorizerFunction = "AuthorizerFunction"
	identityHeader     = "Authorization"
)

// maxReauthorize is the longest API Gateway may keep an authorizer's answer: the API's own
// PrincipalTTL, so a revoked key is refused by the gateway within the time the API refuses it.
var maxReauthorize = int(httpapi.PrincipalTTL / time.Second)

// keyLeadingKeys are the partition keys the authorizer's role may read, by
// dynamodb:LeadingKeys: a key's credential item and its tenant's record (dynamo.TenantStore.ByKey).
var keyLeadingKeys = []string{"apikey#*", "tenant#*"}

// The optional edge: with the parameter edgeParameter "true", the condition edgeCondition makes a
// CloudFront distribution in front of KeyApi whose AWS WAF web ACL blocks a client IP past a rate.
// HttpApi stays out of it: SigV4 signs the Host header, and CloudFront sends the origin's host, so
// a request signed for the distribution's domain would fail API Gateway's check.
const (
	edgeParameter    = "EdgeProtection"
	edgeCondition    = "EdgeProtected"
	edgeWebACL       = "EdgeWebACL"
	edgeDistribution = "EdgeDistribution"
	edgeAPI          = "KeyApi"
	// CloudFront's managed cache policy CachingDisabled: every answer is one caller's own.
	cachingDisabled = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"
	// CloudFront's managed origin request policy AllViewerExceptHostHeader: the viewer's headers
	// (with caching disabled, Authorization among them), query and cookies, but not its Host,
	// since API Gateway routes by its own.
	allViewerExceptHost = "b689b0a8-53d0-40ab-baf2-68738e2966ac"
)

// edgeMethods are the methods the API's routes take; the distribution must let each through.
var edgeMethods = []string{"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "POST", "DELETE"}
