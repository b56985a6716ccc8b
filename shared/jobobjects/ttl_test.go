package jobobjects

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tidegate/tidegate/shared/config"
)

func job(spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "train"}, "spec": spec}
}

func TestWithJobTTL(t *testing.T) {
	floor := int64(MinJobTTL / time.Second)
	for _, tt := range []struct {
		name string
		in   map[string]any
		ttl  time.Duration
		want any // the Job's ttlSecondsAfterFinished after; nil for none
	}{
		{"unset gets the setting", job(map[string]any{}), time.Hour, int64(3600)},
		{"unset stays unset at 0", job(map[string]any{}), 0, nil},
		{"a longer one is kept", job(map[string]any{"ttlSecondsAfterFinished": json.Number("86400")}), time.Hour, json.Number("86400")},
		{"a shorter one than the setting but above the floor is kept", job(map[string]any{"ttlSecondsAfterFinished": json.Number("600")}), time.Hour, json.Number("600")},
		{"a tenant's 0 is raised to the floor", job(map[string]any{"ttlSecondsAfterFinished": json.Number("0")}), time.Hour, floor},
		{"a tenant's 10 s is raised even when the setting is 0", job(map[string]any{"ttlSecondsAfterFinished": float64(10)}), 0, floor},
		{"a negative one is raised", job(map[string]any{"ttlSecondsAfterFinished": int64(-5)}), time.Hour, floor},
		{"the dev stack's 20 s setting is its own floor", job(map[string]any{}), 20 * time.Second, int64(20)},
		{"under a 20 s setting a tenant's 5 s is raised to it", job(map[string]any{"ttlSecondsAfterFinished": json.Number("5")}), 20 * time.Second, int64(20)},
		{"under a 20 s setting a tenant's 60 s is kept", job(map[string]any{"ttlSecondsAfterFinished": json.Number("60")}), 20 * time.Second, json.Number("60")},
		{"a null one is set", job(map[string]any{"ttlSecondsAfterFinished": nil}), time.Hour, int64(3600)},
		{"not a number is left for the API server", job(map[string]any{"ttlSecondsAfterFinished": "soon"}), time.Hour, "soon"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprintf("%#v", tt.in)
			out := WithJobTTL([]map[string]any{tt.in}, tt.ttl)
			got, set := out[0]["spec"].(map[string]any)["ttlSecondsAfterFinished"]
			if !set {
				got = nil
			}
			if !cmp.Equal(got, tt.want) {
				t.Errorf("ttlSecondsAfterFinished = %#v, want %#v", got, tt.want)
			}
			if after := fmt.Sprintf("%#v", tt.in); after != before {
				t.Errorf("WithJobTTL changed its input: %s, was %s", after, before)
			}
		})
	}
}

func TestWithJobTTLReachesCronJobsOnly(t *testing.T) {
	cron := map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "spec": map[string]any{
		"schedule": "0 3 * * *", "jobTemplate": map[string]any{"spec": map[string]any{}},
	}}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "spec": map[string]any{}}
	beta := map[string]any{"apiVersion": "batch/v1beta1", "kind": "Job", "spec": map[string]any{}}
	out := WithJobTTL([]map[string]any{cron, cm, beta}, time.Hour)
	if got := out[0]["spec"].(map[string]any)["jobTemplate"].(map[string]any)["spec"].(map[string]any)["ttlSecondsAfterFinished"]; got != int64(3600) {
		t.Errorf("CronJob's jobTemplate ttlSecondsAfterFinished = %#v, want 3600", got)
	}
	if _, set := out[0]["spec"].(map[string]any)["ttlSecondsAfterFinished"]; set {
		t.Error("WithJobTTL set ttlSecondsAfterFinished on the CronJob's own spec")
	}
	for i, m := range out[1:] {
		if _, set := m["spec"].(map[string]any)["ttlSecondsAfterFinished"]; set {
			t.Errorf("WithJobTTL set a TTL on manifest %d, %s %s", i+1, m["apiVersion"], m["kind"])
		}
	}
}

func TestMinJobTTLIsTheSettingsFloor(t *testing.T) {
	if config.MinJobTTL != MinJobTTL {
		t.Errorf("config.MinJobTTL = %v, jobobjects.MinJobTTL = %v; the setting's floor and the stamp's must agree", config.MinJobTTL, MinJobTTL)
	}
}
