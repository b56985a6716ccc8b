package kube

import (
	"context"
	"testing"
	"time"

	"github.com/tidegate/tidegate/shared/ekstoken"
)

func TestUsable(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tok := ekstoken.Token{Value: "tok-1", Expires: now.Add(time.Minute)}
	tests := []struct {
		name    string
		tok     ekstoken.Token
		refused string
		at      time.Time
		want    bool
	}{
		{"fresh", tok, "", now, true},
		{"a moment before expiry", tok, "", now.Add(time.Minute - time.Nanosecond), true},
		{"at expiry", tok, "", now.Add(time.Minute), false},
		{"none yet", ekstoken.Token{}, "", now, false},
		{"refused", tok, "tok-1", now, false},
		{"another one refused", tok, "tok-0", now, true},
	}
	for _, tt := range tests {
		if got := usable(tt.tok, tt.refused, tt.at); got != tt.want {
			t.Errorf("usable(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestTokenSourceRenewsARefusedTokenOnce: requests that all saw the same token refused get one new
// token between them.
func TestTokenSourceRenewsARefusedTokenOnce(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	tokens := &fakeTokens{now: clock.Now}
	s := newTokenSource(func(ctx context.Context) (ekstoken.Token, error) { return tokens.Token(ctx, "us-east-1", "prod") }, clock.Now)
	ctx := context.Background()
	var got []string
	for _, refused := range []string{"", "tok-1", "tok-1", "tok-1", ""} {
		tok, err := s.token(ctx, refused)
		if err != nil {
			t.Fatalf("token(refused %q): %v", refused, err)
		}
		got = append(got, tok)
	}
	want := []string{"tok-1", "tok-2", "tok-2", "tok-2", "tok-2"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("tokens handed out = %v, want %v", got, want)
		}
	}
}

func TestTokenSourceRespectsContext(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s := newTokenSource(func(context.Context) (ekstoken.Token, error) { return ekstoken.Token{}, nil }, clock.Now)
	s.lock <- struct{}{} // another request is making a token and does not finish
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := s.token(ctx, ""); err == nil {
		t.Errorf("token while another holds the lock, with a context that ends: succeeded, want the context's error")
	}
}
