package samcheck

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// envOf is function id's own environment variables in doc, made if it has none.
func envOf(doc map[string]any, id string) map[string]any {
	p := props(doc, id)
	if p["Environment"] == nil {
		p["Environment"] = map[string]any{"Variables": map[string]any{}}
	}
	return node(p, "Environment", "Variables")
}

// TestSecretsInConfiguration plants, in the real template, each way a secret or the secrets key's
// wiring can go wrong, and checks Check reports it.
func TestSecretsInConfiguration(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(doc map[string]any)
		want   Problem // Message is a fragment the reported message must contain
	}{
		{
			name: "a Secrets Manager secret resolved into a function's environment",
			mutate: func(doc map[string]any) {
				envOf(doc, "ApiFunction")["TIDEGATE_SECRETS_KEY"] = map[string]any{"Fn::Sub": "{{resolve:secretsmanager:${ControlTable}:SecretString}}"}
			},
			want: Problem{RuleSecretEnv, "ApiFunction", "TIDEGATE_SECRETS_KEY resolves a secret ({{resolve:secretsmanager:"},
		},
		{
			name: "a SecureString parameter resolved in Globals",
			mutate: func(doc map[string]any) {
				globalEnv(doc)["DB_PASSWORD"] = "{{resolve:ssm-secure:/tidegate/db-password:1}}"
			},
			want: Problem{RuleSecretEnv, "DispatchFunction", "DB_PASSWORD resolves a secret ({{resolve:ssm-secure:"},
		},
		{
			name: "a NoEcho parameter in a function's environment",
			mutate: func(doc map[string]any) {
				node(doc, "Parameters")["SealingKey"] = map[string]any{"Type": "String", "NoEcho": true}
				envOf(doc, "WebhookFunction")["SEALING_KEY"] = map[string]any{"Ref": "SealingKey"}
			},
			want: Problem{RuleSecretEnv, "WebhookFunction", "SEALING_KEY takes parameter SealingKey, which is NoEcho"},
		},
		{
			name: "a NoEcho parameter inside a Sub",
			mutate: func(doc map[string]any) {
				node(doc, "Parameters")["SealingKey"] = map[string]any{"Type": "String", "NoEcho": true}
				envOf(doc, "ReconcileFunction")["DSN"] = map[string]any{"Fn::Sub": "postgres://tidegate:${SealingKey}@db/tidegate"}
			},
			want: Problem{RuleSecretEnv, "ReconcileFunction", "DSN takes parameter SealingKey"},
		},
		{
			name:   "a KMS key that does not rotate",
			mutate: func(doc map[string]any) { props(doc, secretsKMSKey)["EnableKeyRotation"] = false },
			want:   Problem{RuleKMS, secretsKMSKey, "EnableKeyRotation: true"},
		},
		{
			name:   "no KMS key",
			mutate: func(doc map[string]any) { delete(node(doc, "Resources"), secretsKMSKey) },
			want:   Problem{RuleKMS, secretsKMSKey, "is not an AWS::KMS::Key"},
		},
		{
			name:   "a function with a keyring not given the key",
			mutate: func(doc map[string]any) { delete(envOf(doc, "WebhookFunction"), "TIDEGATE_KMS_KEY") },
			want:   Problem{RuleKMS, "WebhookFunction", `TIDEGATE_KMS_KEY is ""; set it to !GetAtt SecretsKmsKey.Arn`},
		},
		{
			name: "a function without a keyring given the key",
			mutate: func(doc map[string]any) {
				envOf(doc, "DispatchFunction")["TIDEGATE_KMS_KEY"] = getAtt(secretsKMSKey, "Arn")
			},
			want: Problem{RuleKMS, "DispatchFunction", "TIDEGATE_KMS_KEY is set; remove it"},
		},
		{
			name: "a key policy open to any principal",
			mutate: func(doc map[string]any) {
				st := node(doc, "Resources", secretsKMSKey, "Properties", "KeyPolicy", "Statement", 1)
				st["Principal"] = map[string]any{"AWS": "*"}
			},
			want: Problem{RuleKMS, secretsKMSKey, "statement RolesUseItAsTheirPoliciesSay (Properties.KeyPolicy.Statement[1]) allows any principal"},
		},
		{
			name: "the beat allowed to make data keys",
			mutate: func(doc map[string]any) {
				s := stmt(doc, "ReconcileRole", "SecretsKeys")
				s["Action"] = []any{"kms:Decrypt", "kms:GenerateDataKey"}
			},
			want: Problem{RuleKMS, "ReconcileRole", "allows [kms:Decrypt kms:GenerateDataKey] on SecretsKmsKey; ReconcileFunction calls exactly [kms:Decrypt]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := longForm(t)
			tt.mutate(doc)
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			tmpl, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse(mutated template): %v", err)
			}
			got := Check(tmpl, fakeRoot(t))
			if !slices.ContainsFunc(got, func(p Problem) bool {
				return p.Rule == tt.want.Rule && p.Resource == tt.want.Resource && strings.Contains(p.Message, tt.want.Message)
			}) {
				t.Errorf("Check(template with %s) did not report %s; it reported:\n%s", tt.name, tt.want, list(got))
			}
		})
	}
}
