package capacitytype

import (
	"encoding/json"
	"reflect"
	"testing"
)

// decode reads a manifest written as JSON, as the API decodes it.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const spotAffinity = `"affinity": {"nodeAffinity": {
	"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
		{"matchExpressions": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}]},
	"preferredDuringSchedulingIgnoredDuringExecution": [
		{"weight": 1, "preference": {"matchExpressions": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}},
		{"weight": 2, "preference": {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}}]}}`

const onDemandAffinity = `"affinity": {"nodeAffinity": {
	"preferredDuringSchedulingIgnoredDuringExecution": [
		{"weight": 2, "preference": {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}}]}}`

func TestOnDemandKinds(t *testing.T) {
	pod := `{"containers": [{"name": "main", "image": "busybox"}], "nodeSelector": {"karpenter.sh/capacity-type": "spot", "disk": "ssd"}, ` + spotAffinity + `}`
	want := `{"containers": [{"name": "main", "image": "busybox"}], "nodeSelector": {"karpenter.sh/capacity-type": "on-demand", "disk": "ssd"}, ` + onDemandAffinity + `}`
	for _, tc := range []struct{ kind, in, want string }{
		{"Pod", `{"apiVersion": "v1", "kind": "Pod", "spec": ` + pod + `}`, `{"apiVersion": "v1", "kind": "Pod", "spec": ` + want + `}`},
		{"Job", `{"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": ` + pod + `}}}`,
			`{"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": ` + want + `}}}`},
		{"CronJob", `{"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": ` + pod + `}}}}}`,
			`{"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": ` + want + `}}}}}`},
		{"Deployment", `{"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 2, "template": {"spec": ` + pod + `}}}`,
			`{"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 2, "template": {"spec": ` + want + `}}}`},
		{"ConfigMap", `{"apiVersion": "v1", "kind": "ConfigMap", "data": {"spec": "x"}}`, `{"apiVersion": "v1", "kind": "ConfigMap", "data": {"spec": "x"}}`},
	} {
		in := decode(t, tc.in)
		kept := decode(t, tc.in)
		got := OnDemand([]map[string]any{in}, Karpenter)
		if !reflect.DeepEqual(got[0], decode(t, tc.want)) {
			b, _ := json.Marshal(got[0])
			t.Errorf("%s: OnDemand = %s\nwant %s", tc.kind, b, tc.want)
		}
		if !reflect.DeepEqual(in, kept) {
			t.Errorf("%s: OnDemand changed the manifest it was given", tc.kind)
		}
	}
}

func TestOnDemandSelector(t *testing.T) {
	for _, tc := range []struct{ name, label, spec, want string }{
		{"no selector yet, EKS's label", EKS, `{"containers": []}`, `{"containers": [], "nodeSelector": {"eks.amazonaws.com/capacityType": "ON_DEMAND"}}`},
		{"a term with more than the capacity type keeps the rest", Karpenter,
			`{"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
				{"matchExpressions": [{"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["on-demand"]}, {"key": "zone", "operator": "In", "values": ["a"]}]}]}}}}`,
			`{"nodeSelector": {"karpenter.sh/capacity-type": "on-demand"}, "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
				{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}}`},
		{"a requirement on other labels stays", Karpenter,
			`{"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
				{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}}`,
			`{"nodeSelector": {"karpenter.sh/capacity-type": "on-demand"}, "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
				{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}}`},
		{"an unknown label changes nothing", "example.com/capacity", `{"containers": []}`, `{"containers": []}`},
		{"odd shapes are left alone", Karpenter, `{"nodeSelector": "x", "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [3, {"preference": 4}]}}}`,
			`{"nodeSelector": {"karpenter.sh/capacity-type": "on-demand"}, "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [3, {"preference": 4}]}}}`},
	} {
		m := decode(t, `{"apiVersion": "v1", "kind": "Pod", "spec": `+tc.spec+`}`)
		got := OnDemand([]map[string]any{m}, tc.label)[0]["spec"]
		if want := decode(t, tc.want); !reflect.DeepEqual(got, want) {
			b, _ := json.Marshal(got)
			t.Errorf("%s: spec = %s\nwant %s", tc.name, b, tc.want)
		}
	}
}
