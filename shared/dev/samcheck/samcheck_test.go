package samcheck

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidegate/tidegate/shared/metrics"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/dynamo"
)

// The checkout this package lives in, and its template.
const (
	repoRoot     = "../../.."
	templatePath = repoRoot + "/template.yaml"
)

func TestCheckTemplate(t *testing.T) {
	tmpl, err := ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Check(tmpl, repoRoot) {
		t.Errorf("Check(template.yaml, repository root): %s", p)
	}
}

// TestTemplateOnFakeRoot checks the template against a root that has every source folder, so the
// mutation tests below start from zero problems whatever the state of functions/.
func TestTemplateOnFakeRoot(t *testing.T) {
	tmpl, err := ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Check(tmpl, fakeRoot(t)) {
		t.Errorf("Check(template.yaml, fake root): %s", p)
	}
}

// TestTablesMatchSharedDynamo holds wiring.go's table schema, which Check holds template.yaml to,
// in step with shared/dynamo's, which the stores and `tidegate dev` create tables from.
func TestTablesMatchSharedDynamo(t *testing.T) {
	want := map[string][]string{}
	wantIncludes := map[string]map[string][]string{}
	for _, s := range (dynamo.Tables{Jobs: "JobsTable", Events: "EventsTable", Control: "ControlTable"}).Specs() {
		want[s.Name] = s.Indexes
		if len(s.Include) > 0 {
			wantIncludes[s.Name] = s.Include
		}
	}
	if diff := cmp.Diff(want, tables); diff != "" {
		t.Errorf("samcheck's tables differ from shared/dynamo's Specs (-dynamo +samcheck):\n%s", diff)
	}
	if diff := cmp.Diff(wantIncludes, includes); diff != "" {
		t.Errorf("samcheck's index projections differ from shared/dynamo's Specs (-dynamo +samcheck):\n%s", diff)
	}
}

func TestCheckReports(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(doc map[string]any)
		editRoot func(t *testing.T, root string)
		want     Problem // Message is a fragment the reported message must contain
	}{
		// Sources and builds.
		{
			name: "source folder that does not exist",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "ApiFunction", "Metadata")["SourceFolder"] = "functions/nowhere"
			},
			want: Problem{RuleSource, "ApiFunction", "functions/nowhere does not exist"},
		},
		{
			name:     "source folder without main.go",
			editRoot: func(t *testing.T, root string) { remove(t, filepath.Join(root, "functions/webhook/main.go")) },
			want:     Problem{RuleSource, "WebhookFunction", "functions/webhook has no main.go"},
		},
		{
			name: "two functions built from one folder",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "DispatchFunction", "Metadata")["SourceFolder"] = "functions/api"
			},
			want: Problem{RuleSource, "DispatchFunction", "like ApiFunction"},
		},
		{
			name:   "CodeUri is the function's folder",
			mutate: func(doc map[string]any) { props(doc, "ApiFunction")["CodeUri"] = "functions/api" },
			want:   Problem{RuleBuild, "ApiFunction", `CodeUri must be "."`},
		},
		{
			name: "build target missing from sam.mk",
			editRoot: func(t *testing.T, root string) {
				edit(t, filepath.Join(root, samMk), "build-ReconcileFunction:", "build-Reconciler:")
			},
			want: Problem{RuleBuild, "ReconcileFunction", "no target build-ReconcileFunction"},
		},
		{
			name:   "architecture the build does not target",
			mutate: func(doc map[string]any) { props(doc, "WebhookFunction")["Architectures"] = []any{"x86_64"} },
			want:   Problem{RuleBuild, "WebhookFunction", "GOARCH=amd64"},
		},
		{
			name:     "root Makefile that does not include sam.mk",
			editRoot: func(t *testing.T, root string) { write(t, filepath.Join(root, "Makefile"), "all:\n\tgo build ./...\n") },
			want:     Problem{RuleBuild, "", "does not `include build/sam.mk`"},
		},
		// Queues and their events.
		{
			name:   "queue without RedrivePolicy",
			mutate: func(doc map[string]any) { delete(props(doc, "DispatchQueue"), "RedrivePolicy") },
			want:   Problem{RuleRedrive, "DispatchQueue", "has no RedrivePolicy"},
		},
		{
			name: "maxReceiveCount below five",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "WebhookQueue", "Properties", "RedrivePolicy")["maxReceiveCount"] = 2
			},
			want: Problem{RuleRedrive, "WebhookQueue", "maxReceiveCount is 2"},
		},
		{
			name: "dead-letter target that is not a queue",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "WebhookQueue", "Properties", "RedrivePolicy")["deadLetterTargetArn"] = getAtt("JobsTable", "Arn")
			},
			want: Problem{RuleRedrive, "WebhookQueue", "deadLetterTargetArn is !GetAtt JobsTable.Arn"},
		},
		{
			name:   "dead-letter queue that forgets sooner than its source",
			mutate: func(doc map[string]any) { props(doc, "DispatchDeadLetterQueue")["MessageRetentionPeriod"] = 60 },
			want:   Problem{RuleRedrive, "DispatchDeadLetterQueue", "expire early"},
		},
		{
			name:   "visibility timeout shrunk",
			mutate: func(doc map[string]any) { props(doc, "DispatchQueue")["VisibilityTimeout"] = 60 },
			want:   Problem{RuleVisibility, "DispatchQueue", "at least 360 s"},
		},
		{
			name:   "consumer timeout raised past the queue's visibility",
			mutate: func(doc map[string]any) { props(doc, "WebhookFunction")["Timeout"] = 120 },
			want:   Problem{RuleVisibility, "WebhookQueue", "at least 720 s"},
		},
		{
			name: "SQS event without ReportBatchItemFailures",
			mutate: func(doc map[string]any) {
				delete(node(doc, "Resources", "DispatchFunction", "Properties", "Events", "Wake", "Properties"), "FunctionResponseTypes")
			},
			want: Problem{RuleSQSEvent, "DispatchFunction", "event Wake lacks FunctionResponseTypes: [ReportBatchItemFailures]"},
		},
		{
			name: "queue drained by the wrong function",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "WebhookFunction", "Properties", "Events", "Ring", "Properties")["Queue"] = getAtt("DispatchQueue", "Arn")
			},
			want: Problem{RuleSQSEvent, "DispatchQueue", "feeds WebhookFunction (event Ring), but only DispatchFunction should drain it"},
		},
		{
			name: "work queue that feeds nothing",
			mutate: func(doc map[string]any) {
				delete(node(doc, "Resources", "WebhookFunction", "Properties"), "Events")
			},
			want: Problem{RuleSQSEvent, "WebhookFunction", "has no SQS event on WebhookQueue"},
		},
		{
			name: "batch larger than a standard queue allows",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "WebhookFunction", "Properties", "Events", "Ring", "Properties")["BatchSize"] = 100
			},
			want: Problem{RuleSQSEvent, "WebhookFunction", "BatchSize is 100"},
		},
		{
			name:   "queue not encrypted",
			mutate: func(doc map[string]any) { delete(props(doc, "WebhookDeadLetterQueue"), "SqsManagedSseEnabled") },
			want:   Problem{RuleEncryption, "WebhookDeadLetterQueue", "not encrypted"},
		},
		// The beat.
		{
			name: "beat slowed down",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "ReconcileFunction", "Properties", "Events", "Beat", "Properties")["Schedule"] = "rate(5 minutes)"
			},
			want: Problem{RuleSchedule, "ReconcileFunction", `runs at "rate(5 minutes)"`},
		},
		{
			name:   "beat's timeout below its watch",
			mutate: func(doc map[string]any) { props(doc, "ReconcileFunction")["Timeout"] = 55 },
			want:   Problem{RuleSchedule, "ReconcileFunction", "Timeout is 55 s; make it at least 61 s"},
		},
		{
			name:   "beat removed",
			mutate: func(doc map[string]any) { delete(props(doc, "ReconcileFunction"), "Events") },
			want:   Problem{RuleSchedule, "ReconcileFunction", "has no Schedule event"},
		},
		// Policies.
		{
			name:   `table grant on Resource "*"`,
			mutate: func(doc map[string]any) { stmt(doc, "ApiRole", "Tables")["Resource"] = "*" },
			want:   Problem{RuleWildcard, "ApiRole", `on Resource "*"`},
		},
		{
			name:   "spot prices without a region condition",
			mutate: func(doc map[string]any) { delete(stmt(doc, "DispatchRole", "SpotPrices"), "Condition") },
			want:   Problem{RuleWildcard, "DispatchRole", "aws:RequestedRegion"},
		},
		{
			name:   "every action of a service",
			mutate: func(doc map[string]any) { stmt(doc, "ReconcileRole", "Tables")["Action"] = "dynamodb:*" },
			want:   Problem{RuleWildcard, "ReconcileRole", `allows action "dynamodb:*"`},
		},
		{
			name: "role reaching a table its function does not use",
			mutate: func(doc map[string]any) {
				s := stmt(doc, "WebhookRole", "Tables")
				s["Resource"] = append(s["Resource"].([]any), getAtt("JobsTable", "Arn"))
			},
			want: Problem{RuleAccess, "WebhookRole", "grants access to JobsTable, which WebhookFunction does not use"},
		},
		{
			name: "role that cannot poll its queue",
			mutate: func(doc map[string]any) {
				policy := node(doc, "Resources", "DispatchRole", "Properties", "Policies", 0, "PolicyDocument")
				policy["Statement"] = slices.DeleteFunc(policy["Statement"].([]any), func(s any) bool { return s.(map[string]any)["Sid"] == "ConsumeDispatchQueue" })
			},
			want: Problem{RuleAccess, "DispatchRole", "does not allow [sqs:ReceiveMessage sqs:DeleteMessage sqs:GetQueueAttributes] on DispatchQueue"},
		},
		{
			name: "managed policy on a role",
			mutate: func(doc map[string]any) {
				props(doc, "ApiRole")["ManagedPolicyArns"] = []any{"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"}
			},
			want: Problem{RuleAccess, "ApiRole", "attaches managed policies"},
		},
		{
			name:   "function on SAM's generated role",
			mutate: func(doc map[string]any) { delete(props(doc, "ApiFunction"), "Role") },
			want:   Problem{RuleAccess, "ApiFunction", "has no Role of its own"},
		},
		// Environment.
		{
			name:   "JSON logs turned off",
			mutate: func(doc map[string]any) { delete(globalEnv(doc), "TIDEGATE_LOG_JSON") },
			want:   Problem{RuleEnvironment, "ApiFunction", "TIDEGATE_LOG_JSON"},
		},
		{
			name: "private webhooks allowed in AWS",
			mutate: func(doc map[string]any) {
				props(doc, "WebhookFunction")["Environment"] = map[string]any{"Variables": map[string]any{"TIDEGATE_WEBHOOKS_ALLOW_PRIVATE": "true"}}
			},
			want: Problem{RuleEnvironment, "WebhookFunction", "TIDEGATE_WEBHOOKS_ALLOW_PRIVATE"},
		},
		{
			name: "queue URL set from the queue's ARN",
			mutate: func(doc map[string]any) {
				globalEnv(doc)["TIDEGATE_DISPATCH_QUEUE_URL"] = getAtt("DispatchQueue", "Arn")
			},
			want: Problem{RuleEnvironment, "DispatchFunction", "TIDEGATE_DISPATCH_QUEUE_URL is !GetAtt DispatchQueue.Arn; set it to !Ref DispatchQueue"},
		},
		{
			name:   "required setting missing",
			mutate: func(doc map[string]any) { delete(globalEnv(doc), "TIDEGATE_REGIONS") },
			want:   Problem{RuleEnvironment, "ReconcileFunction", "TIDEGATE_REGIONS is not set"},
		},
		{
			name:   "dev endpoint left in",
			mutate: func(doc map[string]any) { globalEnv(doc)["TIDEGATE_SQS_ENDPOINT"] = "http://127.0.0.1:9324" },
			want:   Problem{RuleEnvironment, "WebhookFunction", "TIDEGATE_SQS_ENDPOINT is set"},
		},
		// Tables.
		{
			name:   "table without point-in-time recovery",
			mutate: func(doc map[string]any) { delete(props(doc, "EventsTable"), "PointInTimeRecoverySpecification") },
			want:   Problem{RuleTable, "EventsTable", "no point-in-time recovery"},
		},
		{
			name:   "provisioned billing",
			mutate: func(doc map[string]any) { props(doc, "ControlTable")["BillingMode"] = "PROVISIONED" },
			want:   Problem{RuleTable, "ControlTable", `BillingMode is "PROVISIONED"`},
		},
		{
			name: "encryption off",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "JobsTable", "Properties", "SSESpecification")["SSEEnabled"] = false
			},
			want: Problem{RuleTable, "JobsTable", "SSEEnabled is not true"},
		},
		{
			name: "index renamed",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "JobsTable", "Properties", "GlobalSecondaryIndexes", 1)["IndexName"] = "byStatus"
			},
			want: Problem{RuleTable, "JobsTable", "has no global secondary index gsi2"},
		},
		{
			name:   "table not retained",
			mutate: func(doc map[string]any) { delete(node(doc, "Resources", "ControlTable"), "DeletionPolicy") },
			want:   Problem{RuleTable, "ControlTable", "DeletionPolicy: Retain"},
		},
		{
			name: "TTL on another attribute",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "EventsTable", "Properties", "TimeToLiveSpecification")["AttributeName"] = "ttl"
			},
			want: Problem{RuleTable, "EventsTable", "TimeToLiveSpecification on expires_at"},
		},
		// Bucket.
		{
			name: "bucket policy may go public",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "SourcesBucket", "Properties", "PublicAccessBlockConfiguration")["BlockPublicPolicy"] = false
			},
			want: Problem{RuleBucket, "SourcesBucket", "PublicAccessBlockConfiguration"},
		},
		{
			name:   "bucket reachable over plain HTTP",
			mutate: func(doc map[string]any) { delete(node(doc, "Resources"), "SourcesBucketPolicy") },
			want:   Problem{RuleBucket, "SourcesBucket", "denies requests without TLS"},
		},
		{
			name: "bucket with ACLs",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "SourcesBucket", "Properties", "OwnershipControls", "Rules", 0)["ObjectOwnership"] = "ObjectWriter"
			},
			want: Problem{RuleBucket, "SourcesBucket", "BucketOwnerEnforced"},
		},
		// HTTP API.
		{
			name: "catch-all route opened",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "ApiFunction", "Properties", "Events", "Everything", "Properties")["Auth"] = map[string]any{"Authorizer": "NONE"}
			},
			want: Problem{RuleAPIAuth, "ApiFunction", "route ANY /{proxy+} on HttpApi needs no credentials"},
		},
		{
			name: "IAM authorizer not enabled",
			mutate: func(doc map[string]any) {
				delete(node(doc, "Resources", "HttpApi", "Properties", "Auth"), "EnableIamAuthorizer")
			},
			want: Problem{RuleAPIAuth, "HttpApi", "EnableIamAuthorizer: true"},
		},
		{
			name: "health check behind a signature",
			mutate: func(doc map[string]any) {
				delete(node(doc, "Resources", "ApiFunction", "Properties", "Events", "Healthz", "Properties"), "Auth")
			},
			want: Problem{RuleAPIAuth, "ApiFunction", "route GET /healthz on HttpApi requires credentials"},
		},
		{
			name: "route on the implicit API",
			mutate: func(doc map[string]any) {
				delete(node(doc, "Resources", "ApiFunction", "Properties", "Events", "OpenAPI", "Properties"), "ApiId")
			},
			want: Problem{RuleAPIAuth, "ApiFunction", "event OpenAPI (GET /openapi.json) has ApiId"},
		},
		// The key API, its authorizer, and which caller reaches which route.
		{
			name: "key API's catch-all behind IAM",
			mutate: func(doc map[string]any) {
				apiEvent(doc, "KeyEverything")["Auth"] = map[string]any{"Authorizer": "AWS_IAM"}
			},
			want: Problem{RuleAPIAuth, "ApiFunction", `route ANY /{proxy+} on KeyApi uses authorizer "AWS_IAM"`},
		},
		{
			name: "IAM API's catch-all behind the key authorizer",
			mutate: func(doc map[string]any) {
				apiEvent(doc, "Everything")["Auth"] = map[string]any{"Authorizer": "KeyAuthorizer"}
			},
			want: Problem{RuleAPIAuth, "ApiFunction", `route ANY /{proxy+} on HttpApi uses authorizer "KeyAuthorizer"`},
		},
		{
			name: "key API's catch-all opened",
			mutate: func(doc map[string]any) {
				apiEvent(doc, "KeyEverything")["Auth"] = map[string]any{"Authorizer": "NONE"}
			},
			want: Problem{RuleAPIAuth, "ApiFunction", "route ANY /{proxy+} on KeyApi needs no credentials"},
		},
		{
			name: "host registration opened on the key API",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "ApiFunction", "Properties", "Events")["KeyHostRegister"] = map[string]any{"Type": "HttpApi", "Properties": map[string]any{
					"ApiId": map[string]any{"Ref": "KeyApi"}, "Method": "POST", "Path": "/api/v1/hosts/{host}/register",
					"PayloadFormatVersion": "2.0", "Auth": map[string]any{"Authorizer": "NONE"},
				}}
			},
			want: Problem{RuleAPIAuth, "ApiFunction", "route POST /api/v1/hosts/{host}/register on KeyApi needs no credentials"},
		},
		{
			name:   "key route on the implicit API",
			mutate: func(doc map[string]any) { delete(apiEvent(doc, "KeyEverything"), "ApiId") },
			want:   Problem{RuleAPIAuth, "ApiFunction", "event KeyEverything (ANY /{proxy+}) has ApiId"},
		},
		{
			name: "key API without its default authorizer",
			mutate: func(doc map[string]any) {
				delete(node(doc, "Resources", "KeyApi", "Properties", "Auth"), "DefaultAuthorizer")
			},
			want: Problem{RuleAPIAuth, "KeyApi", "DefaultAuthorizer: KeyAuthorizer"},
		},
		{
			name: "key API that lets routes opt into IAM",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "KeyApi", "Properties", "Auth")["EnableIamAuthorizer"] = true
			},
			want: Problem{RuleAPIAuth, "KeyApi", "not EnableIamAuthorizer"},
		},
		{
			name:   "key API removed",
			mutate: func(doc map[string]any) { delete(node(doc, "Resources"), "KeyApi") },
			want:   Problem{RuleAPIAuth, "KeyApi", "missing"},
		},
		{
			name: "a third HTTP API",
			mutate: func(doc map[string]any) {
				node(doc, "Resources")["OpenApi"] = map[string]any{"Type": "AWS::Serverless::HttpApi", "Properties": map[string]any{}}
			},
			want: Problem{RuleAPIAuth, "OpenApi", "an HTTP API samcheck does not know"},
		},
		{
			name:   "key authorizer answered by the API function",
			mutate: func(doc map[string]any) { keyAuth(doc)["FunctionArn"] = getAtt("ApiFunction", "Arn") },
			want:   Problem{RuleAPIAuth, "KeyApi", "FunctionArn is !GetAtt ApiFunction.Arn"},
		},
		{
			name:   "key authorizer in payload format 1.0",
			mutate: func(doc map[string]any) { keyAuth(doc)["AuthorizerPayloadFormatVersion"] = "1.0" },
			want:   Problem{RuleAPIAuth, "KeyApi", `AuthorizerPayloadFormatVersion is "1.0"`},
		},
		{
			name:   "key authorizer expected to answer with a policy",
			mutate: func(doc map[string]any) { delete(keyAuth(doc), "EnableSimpleResponses") },
			want:   Problem{RuleAPIAuth, "KeyApi", "EnableSimpleResponses is not true"},
		},
		{
			name:   "key authorizer API Gateway may not invoke",
			mutate: func(doc map[string]any) { delete(keyAuth(doc), "EnableFunctionDefaultPermissions") },
			want:   Problem{RuleAPIAuth, "KeyApi", "could not invoke it"},
		},
		{
			name:   "key read from another header",
			mutate: func(doc map[string]any) { node(keyAuth(doc), "Identity")["Headers"] = []any{"X-Api-Key"} },
			want:   Problem{RuleAPIAuth, "KeyApi", "Identity.Headers is [X-Api-Key]"},
		},
		{
			name:   "key authorizer's answers kept five minutes",
			mutate: func(doc map[string]any) { node(keyAuth(doc), "Identity")["ReauthorizeEvery"] = 300 },
			want:   Problem{RuleAPIAuth, "KeyApi", "ReauthorizeEvery is 300"},
		},
		{
			name:   "key authorizer's cache left to the default",
			mutate: func(doc map[string]any) { delete(node(keyAuth(doc), "Identity"), "ReauthorizeEvery") },
			want:   Problem{RuleAPIAuth, "KeyApi", "ReauthorizeEvery is <nil>"},
		},
		{
			name:   "authorizer function removed",
			mutate: func(doc map[string]any) { delete(node(doc, "Resources"), "AuthorizerFunction") },
			want:   Problem{RuleSource, "AuthorizerFunction", "missing"},
		},
		{
			name:   "authorizer on SAM's generated role",
			mutate: func(doc map[string]any) { delete(props(doc, "AuthorizerFunction"), "Role") },
			want:   Problem{RuleAccess, "AuthorizerFunction", "has no Role of its own"},
		},
		{
			name: "authorizer that may write keys",
			mutate: func(doc map[string]any) {
				stmt(doc, "AuthorizerRole", "ReadKeys")["Action"] = []any{"dynamodb:GetItem", "dynamodb:PutItem"}
			},
			want: Problem{RuleAccess, "AuthorizerRole", "allows dynamodb:PutItem"},
		},
		{
			name: "authorizer reaching the jobs table",
			mutate: func(doc map[string]any) {
				stmt(doc, "AuthorizerRole", "ReadKeys")["Resource"] = []any{getAtt("ControlTable", "Arn"), getAtt("JobsTable", "Arn")}
			},
			want: Problem{RuleAccess, "AuthorizerRole", "grants access to JobsTable, which AuthorizerFunction does not use"},
		},
		{
			name:   "authorizer reading the whole control table",
			mutate: func(doc map[string]any) { delete(stmt(doc, "AuthorizerRole", "ReadKeys"), "Condition") },
			want:   Problem{RuleAccess, "AuthorizerRole", "dynamodb:LeadingKeys []"},
		},
		{
			name: "authorizer reading orgs' secrets too",
			mutate: func(doc map[string]any) {
				node(stmt(doc, "AuthorizerRole", "ReadKeys"), "Condition", "ForAllValues:StringLike")["dynamodb:LeadingKeys"] = []any{"apikey#*", "tenant#*", "secrets#*"}
			},
			want: Problem{RuleAccess, "AuthorizerRole", "secrets#*"},
		},
		{
			name: "authorizer serving a route",
			mutate: func(doc map[string]any) {
				props(doc, "AuthorizerFunction")["Events"] = map[string]any{"Check": map[string]any{"Type": "HttpApi", "Properties": map[string]any{
					"ApiId": map[string]any{"Ref": "KeyApi"}, "Method": "GET", "Path": "/check", "PayloadFormatVersion": "2.0",
				}}}
			},
			want: Problem{RuleAPIAuth, "AuthorizerFunction", "serves route GET /check"},
		},
		// The optional edge: CloudFront and AWS WAF in front of the key API.
		{
			name:   "edge web ACL made whatever the parameter",
			mutate: func(doc map[string]any) { delete(node(doc, "Resources", "EdgeWebACL"), "Condition") },
			want:   Problem{RuleEdge, "EdgeWebACL", "without Condition: EdgeProtected"},
		},
		{
			name:   "edge distribution under another condition",
			mutate: func(doc map[string]any) { node(doc, "Resources", "EdgeDistribution")["Condition"] = "HasAlarmTopic" },
			want:   Problem{RuleEdge, "EdgeDistribution", "without Condition: EdgeProtected"},
		},
		{
			name:   "edge output without the condition",
			mutate: func(doc map[string]any) { delete(node(doc, "Outputs", "EdgeUrl"), "Condition") },
			want:   Problem{RuleEdge, "EdgeUrl", "give it Condition: EdgeProtected"},
		},
		{
			name: "edge on unless asked",
			mutate: func(doc map[string]any) {
				node(doc, "Parameters", "EdgeProtection")["Default"] = "true"
			},
			want: Problem{RuleEdge, "EdgeProtection", `Default "true"`},
		},
		{
			name: "edge condition on another parameter",
			mutate: func(doc map[string]any) {
				node(doc, "Conditions")["EdgeProtected"] = map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "PolicyAllowNodeName"}, "true"}}
			},
			want: Problem{RuleEdge, "EdgeProtected", `set it to !Equals [!Ref EdgeProtection, "true"]`},
		},
		{
			name: "edge removed",
			mutate: func(doc map[string]any) {
				delete(node(doc, "Resources"), "EdgeDistribution")
				delete(node(doc, "Outputs"), "EdgeUrl")
			},
			want: Problem{RuleEdge, "EdgeDistribution", "missing"},
		},
		{
			name:   "web ACL of regional scope",
			mutate: func(doc map[string]any) { props(doc, "EdgeWebACL")["Scope"] = "REGIONAL" },
			want:   Problem{RuleEdge, "EdgeWebACL", `Scope is "REGIONAL"`},
		},
		{
			name: "rate counted by a header the client writes",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "EdgeWebACL", "Properties", "Rules", 0, "Statement", "RateBasedStatement")["AggregateKeyType"] = "FORWARDED_IP"
			},
			want: Problem{RuleEdge, "EdgeWebACL", `aggregates by "FORWARDED_IP"`},
		},
		{
			name: "rate rule that only counts",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "EdgeWebACL", "Properties", "Rules", 0)["Action"] = map[string]any{"Count": map[string]any{}}
			},
			want: Problem{RuleEdge, "EdgeWebACL", "set Block"},
		},
		{
			name:   "web ACL without a rate rule",
			mutate: func(doc map[string]any) { props(doc, "EdgeWebACL")["Rules"] = []any{} },
			want:   Problem{RuleEdge, "EdgeWebACL", "has no rule that blocks a client IP past a rate"},
		},
		{
			name: "distribution without the web ACL",
			mutate: func(doc map[string]any) {
				delete(node(doc, "Resources", "EdgeDistribution", "Properties", "DistributionConfig"), "WebACLId")
			},
			want: Problem{RuleEdge, "EdgeDistribution", "set it to !GetAtt EdgeWebACL.Arn"},
		},
		{
			name: "IAM API behind CloudFront",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "EdgeDistribution", "Properties", "DistributionConfig", "Origins", 0)["DomainName"] = map[string]any{"Fn::Sub": "${HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}"}
			},
			want: Problem{RuleEdge, "EdgeDistribution", "is HttpApi"},
		},
		{
			name: "distribution in front of something else",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "EdgeDistribution", "Properties", "DistributionConfig", "Origins", 0)["DomainName"] = "example.com"
			},
			want: Problem{RuleEdge, "EdgeDistribution", "has no origin on KeyApi"},
		},
		{
			name: "origin reached over plain HTTP",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "EdgeDistribution", "Properties", "DistributionConfig", "Origins", 0, "CustomOriginConfig")["OriginProtocolPolicy"] = "http-only"
			},
			want: Problem{RuleEdge, "EdgeDistribution", `OriginProtocolPolicy "http-only"`},
		},
		{
			name:   "viewers let in over plain HTTP",
			mutate: func(doc map[string]any) { edgeBehavior(doc)["ViewerProtocolPolicy"] = "redirect-to-https" },
			want:   Problem{RuleEdge, "EdgeDistribution", `DefaultCacheBehavior has ViewerProtocolPolicy "redirect-to-https"`},
		},
		{
			name: "answers cached",
			// CloudFront's managed CachingOptimized.
			mutate: func(doc map[string]any) { edgeBehavior(doc)["CachePolicyId"] = "658327ea-f89d-4fab-a63d-7e88639e58f6" },
			want:   Problem{RuleEdge, "EdgeDistribution", "CachingDisabled"},
		},
		{
			name: "the viewer's Host sent to API Gateway",
			// CloudFront's managed AllViewer.
			mutate: func(doc map[string]any) {
				edgeBehavior(doc)["OriginRequestPolicyId"] = "216adef6-5c7f-47e4-b989-5492eafa07d3"
			},
			want: Problem{RuleEdge, "EdgeDistribution", "AllViewerExceptHostHeader"},
		},
		{
			name:   "writes refused at the edge",
			mutate: func(doc map[string]any) { edgeBehavior(doc)["AllowedMethods"] = []any{"GET", "HEAD"} },
			want:   Problem{RuleEdge, "EdgeDistribution", "AllowedMethods [GET HEAD]"},
		},
		{
			name: "a path cached apart",
			mutate: func(doc map[string]any) {
				node(doc, "Resources", "EdgeDistribution", "Properties", "DistributionConfig")["CacheBehaviors"] = []any{map[string]any{
					"PathPattern": "/console/*", "TargetOriginId": "KeyApi", "ViewerProtocolPolicy": "https-only",
					"CachePolicyId": "658327ea-f89d-4fab-a63d-7e88639e58f6", "OriginRequestPolicyId": "b689b0a8-53d0-40ab-baf2-68738e2966ac",
					"AllowedMethods": []any{"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "POST", "DELETE"},
				}}
			},
			want: Problem{RuleEdge, "EdgeDistribution", "CacheBehaviors[0] (/console/*) has CachePolicyId"},
		},
		// Alarms and the dashboard.
		{
			name:   "an alarm on a metric nobody publishes",
			mutate: func(doc map[string]any) { props(doc, "BeatStoppedAlarm")["MetricName"] = "Beats" },
			want:   Problem{RuleMetrics, "BeatStoppedAlarm", "watches Tidegate.Beats, which no function publishes"},
		},
		{
			name: "an alarm on a metric under dimensions it is not published under",
			mutate: func(doc map[string]any) {
				props(doc, "BeatStoppedAlarm")["Dimensions"] = []any{map[string]any{"Name": "Region", "Value": "us-east-1"}}
			},
			want: Problem{RuleMetrics, "BeatStoppedAlarm", "watches BeatDuration under dimensions [Region], but it is published under []"},
		},
		{
			name: "a dashboard drawing a metric nobody publishes",
			mutate: func(doc map[string]any) {
				props(doc, "Dashboard")["DashboardBody"] = `{"widgets": [{"type": "metric", "properties": {"metrics": [["Tidegate", "QueueDepth"]]}}]}`
			},
			want: Problem{RuleMetrics, "Dashboard", "draws Tidegate.QueueDepth, which no function publishes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := longForm(t)
			if tt.mutate != nil {
				tt.mutate(doc)
			}
			root := fakeRoot(t)
			if tt.editRoot != nil {
				tt.editRoot(t, root)
			}
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			tmpl, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse(mutated template): %v", err)
			}
			got := Check(tmpl, root)
			if !slices.ContainsFunc(got, func(p Problem) bool {
				return p.Rule == tt.want.Rule && p.Resource == tt.want.Resource && strings.Contains(p.Message, tt.want.Message)
			}) {
				t.Errorf("Check(template with %s) did not report %s; it reported:\n%s", tt.name, tt.want, list(got))
			}
		})
	}
}

// TestDashboardMetrics: the dashboard draws every metric the code publishes, found both in its
// SEARCH expressions and in its metric arrays (so checkMetrics sees each one it draws).
func TestDashboardMetrics(t *testing.T) {
	tmpl, err := ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := dig(tmpl.resource("Dashboard"), "Properties", "DashboardBody").(string)
	got := map[string]bool{}
	for _, name := range dashboardMetrics(body) {
		got[name] = true
	}
	for _, m := range metrics.All {
		if !got[m.Name] {
			t.Errorf("the dashboard does not draw %s (it draws %v)", m.Name, slices.Sorted(maps.Keys(got)))
		}
	}
}

func TestParseKeepsReferences(t *testing.T) {
	tmpl, err := ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{
		"Globals TIDEGATE_JOBS_TABLE":       globalFunction(tmpl).Environment.Variables["TIDEGATE_JOBS_TABLE"],
		"DispatchQueue RedrivePolicy":       str(redrivePolicy(tmpl.CFN.GetAllSQSQueueResources()["DispatchQueue"].RedrivePolicy)["deadLetterTargetArn"]),
		"ApiFunction Role":                  firstString(tmpl.CFN.GetAllServerlessFunctionResources()["ApiFunction"].Role),
		"ApiRole Sources Resource (a !Sub)": stringList(statementIn(t, tmpl, "ApiRole", "Sources").body["Resource"])[0],
	}
	want := map[string]string{
		"Globals TIDEGATE_JOBS_TABLE":       "${JobsTable}",
		"DispatchQueue RedrivePolicy":       "${DispatchDeadLetterQueue.Arn}",
		"ApiFunction Role":                  "${ApiRole.Arn}",
		"ApiRole Sources Resource (a !Sub)": "${SourcesBucket.Arn}/*",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse(template.yaml) references (-want +got):\n%s", diff)
	}
}
