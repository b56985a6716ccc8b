package podspec

import (
	"errors"
	"strings"
	"testing"
)

func TestBuildersRefuseABadLaunch(t *testing.T) {
	tests := []struct {
		name   string
		change func(l *Launch)
		says   string // a part of the error that tells what to fix
	}{
		{"no org", func(l *Launch) { l.Org = "" }, "Org"},
		{"slash in app", func(l *Launch) { l.App = "a/b" }, "App \"a/b\""},
		{"host not a DNS label", func(l *Launch) { l.Host = "Support_Bot" }, "Host \"Support_Bot\" is not a DNS label"},
		{"host too long", func(l *Launch) { l.Host = strings.Repeat("a", 64) }, "is not a DNS label"},
		{"release 0", func(l *Launch) { l.Release = 0 }, "Release 0"},
		{"namespace", func(l *Launch) { l.Namespace = "" }, "Namespace"},
		{"no stack", func(l *Launch) { l.Stack = "" }, "Stack"},
		{"stack no label value", func(l *Launch) { l.Stack = "prod/eu" }, "StackValue"},
		{"env pod uid reserved", func(l *Launch) { l.Env = map[string]string{"TIDEGATE_POD_UID": "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a"} }, "TIDEGATE_"},
		{"sources url relative", func(l *Launch) { l.SourcesURL = "/sources/x" }, "SourcesURL: must be an absolute http or https URL"},
		{"sources url scheme", func(l *Launch) { l.SourcesURL = "file:///etc/passwd" }, "SourcesURL"},
		{"digest upper case", func(l *Launch) { l.SourcesSHA256 = strings.ToUpper(l.SourcesSHA256) }, "SourcesSHA256"},
		{"digest short", func(l *Launch) { l.SourcesSHA256 = "abc" }, "64 lowercase hex digits"},
		{"no token", func(l *Launch) { l.HostToken = "" }, "HostToken"},
		{"register url", func(l *Launch) { l.RegisterURL = "" }, "RegisterURL"},
		{"env name", func(l *Launch) { l.Env = map[string]string{"BAD-NAME": "x"} }, `"BAD-NAME" is not an environment variable name`},
		{"env reserved", func(l *Launch) { l.Env = map[string]string{"TIDEGATE_HOST": "evil"} }, "TIDEGATE_"},
		{"env reserved lower case", func(l *Launch) { l.Env = map[string]string{"tidegate_host_token": "evil"} }, "TIDEGATE_"},
		{"env too big", func(l *Launch) { l.Env = map[string]string{"BIG": strings.Repeat("x", maxSecretBytes)} }, "at most 1048576"},
	}
	for _, tt := range tests {
		l := fixture()
		tt.change(&l)
		pod, podErr := Pod(l)
		secret, secretErr := Secret(l)
		if pod != nil || secret != nil {
			t.Errorf("%s: Pod and Secret built objects from a bad launch", tt.name)
		}
		for _, err := range []error{podErr, secretErr} {
			if !errors.Is(err, ErrInvalidLaunch) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("%s: error %v, want ErrInvalidLaunch saying %q", tt.name, err, tt.says)
			}
		}
	}
}

func TestErrorsKeepCredentialsOut(t *testing.T) {
	l := fixture()
	l.SourcesURL = "https://sources.example/x%zz?X-Amz-Signature=s3cr3t"
	l.Env = map[string]string{"BAD-NAME": "value-s3cr3t"}
	_, err := Pod(l)
	if err == nil {
		t.Fatal("Pod with an unparseable URL and a bad secret name: no error")
	}
	if !strings.Contains(err.Error(), "SourcesURL: not a URL") || !strings.Contains(err.Error(), "BAD-NAME") {
		t.Errorf("Pod's error %v, want it to name the URL and the secret name as the problems", err)
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("Pod's error quotes a credential: %v", err)
	}
}

func TestErrorsListEveryProblem(t *testing.T) {
	l := fixture()
	l.Release, l.HostToken = 0, ""
	_, err := Pod(l)
	for _, want := range []string{"Release 0", "HostToken"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Pod with two problems: error %v, want it to say %q", err, want)
		}
	}
}

func TestCheckEnvName(t *testing.T) {
	for name, ok := range map[string]bool{
		"OPENAI_API_KEY": true, "_x": true, "a1": true,
		"": false, "1A": false, "A-B": false, "A B": false, "A=B": false, "ÄPI": false,
		"TIDEGATE_X": false, "Tidegate_x": false, "TIDEGATE": true,
	} {
		if err := CheckEnvName(name); (err == nil) != ok {
			t.Errorf("CheckEnvName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}
