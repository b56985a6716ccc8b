package podspec

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tidegate/tidegate/shared/jobs"
)

func TestAppAndReleaseReadBack(t *testing.T) {
	l := fixture()
	l.Org, l.App = "Acme Corp", "bot: the 2nd!"
	pod, err := Pod(l)
	if err != nil {
		t.Fatalf("Pod: %v", err)
	}
	secret, err := Secret(l)
	if err != nil {
		t.Fatalf("Secret: %v", err)
	}
	for _, obj := range []metav1.Object{pod, secret} {
		key, ok := AppOf(obj)
		if !ok || key != "Acme Corp/bot: the 2nd!" {
			t.Errorf("AppOf(%s) = %q, %v; want %q, true", obj.GetName(), key, ok, AppKey(l.Org, l.App))
		}
		release, ok := ReleaseOf(obj)
		if !ok || release != l.Release {
			t.Errorf("ReleaseOf(%s) = %d, %v; want %d, true", obj.GetName(), release, ok, l.Release)
		}
	}
}

func TestAppOfRefusesOthers(t *testing.T) {
	ours, err := Pod(fixture())
	if err != nil {
		t.Fatalf("Pod: %v", err)
	}
	tests := map[string]func(p *corev1.Pod){
		"no labels":          func(p *corev1.Pod) { p.Labels = nil },
		"another manager":    func(p *corev1.Pod) { p.Labels[ManagedByLabel] = "someone-else" },
		"no annotation":      func(p *corev1.Pod) { p.Annotations = nil },
		"stamp of other app": func(p *corev1.Pod) { p.Annotations[AppAnnotation] = "acme/other" },
		"a job's pod":        func(p *corev1.Pod) { p.Labels[jobs.IDKey] = "job-01" },
	}
	for name, change := range tests {
		p := ours.DeepCopy()
		change(p)
		if key, ok := AppOf(p); ok {
			t.Errorf("AppOf(pod with %s) = %q, true; want false", name, key)
		}
		if release, ok := ReleaseOf(p); ok {
			t.Errorf("ReleaseOf(pod with %s) = %d, true; want false", name, release)
		}
	}
	bad := ours.DeepCopy()
	bad.Labels[ReleaseLabel] = "seven"
	if release, ok := ReleaseOf(bad); ok {
		t.Errorf("ReleaseOf(pod with release label %q) = %d, true; want false", "seven", release)
	}
}

func TestSelectorFindsHostsOnly(t *testing.T) {
	sel, err := labels.Parse(Selector())
	if err != nil {
		t.Fatalf("Selector() = %q does not parse: %v", Selector(), err)
	}
	pod, err := Pod(fixture())
	if err != nil {
		t.Fatalf("Pod: %v", err)
	}
	if !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("Selector() = %q does not match the host's labels %v", Selector(), pod.Labels)
	}
	job := labels.Set{ManagedByLabel: ManagedBy, AppLabel: "x", jobs.IDKey: "job-01"}
	for name, set := range map[string]labels.Set{
		"a job's pod with copied labels": job,
		"no app label":                   {ManagedByLabel: ManagedBy},
		"not managed by hosting":         {AppLabel: pod.Labels[AppLabel]},
	} {
		if sel.Matches(set) {
			t.Errorf("Selector() = %q matches %s: %v", Selector(), name, set)
		}
	}
}

func TestAppStampIsALabelValue(t *testing.T) {
	for _, key := range []string{"a/b", "Acme Corp/bot: the 2nd!", "ü/ñ"} {
		stamp := AppStamp(key)
		if _, err := labels.Parse(AppLabel + "=" + stamp); err != nil || len(stamp) != stampHexDigits {
			t.Errorf("AppStamp(%q) = %q: not a %d-character label value (%v)", key, stamp, stampHexDigits, err)
		}
	}
	if AppStamp("acme/a") == AppStamp("acme/b") {
		t.Errorf("AppStamp gives acme/a and acme/b the same stamp %q", AppStamp("acme/a"))
	}
}

func TestStackValueAndSelector(t *testing.T) {
	long := strings.Repeat("s", 64)
	for _, tt := range []struct{ stack, want string }{
		{"tidegate-prod", "tidegate-prod"},
		{"", AppStamp("")},
		{long, AppStamp(long)},
		{"prod/eu", AppStamp("prod/eu")},
	} {
		if got := StackValue(tt.stack); got != tt.want {
			t.Errorf("StackValue(%q) = %q, want %q", tt.stack, got, tt.want)
		}
	}
	pod, err := Pod(fixture())
	if err != nil {
		t.Fatalf("Pod: %v", err)
	}
	for _, tt := range []struct {
		stack string
		want  bool
	}{{"tidegate-prod", true}, {"tidegate-staging", false}} {
		sel, err := labels.Parse(StackSelector(OrgSelector("acme"), tt.stack))
		if err != nil {
			t.Fatalf("StackSelector: %v", err)
		}
		if got := sel.Matches(labels.Set(pod.Labels)); got != tt.want {
			t.Errorf("StackSelector(_, %q) matches stack tidegate-prod's host = %v, want %v", tt.stack, got, tt.want)
		}
	}
}
