package kube

import (
	"context"
	"fmt"
	"time"

	"github.com/tidegate/tidegate/shared/ekstoken"
)

// tokenSource keeps one cluster's current token, making a new one when it expires or when the
// cluster refuses it.
type tokenSource struct {
	mint func(context.Context) (ekstoken.Token, error)
	now  func() time.Time
	// lock is a one-place channel so that a request waiting behind another's token can give up
	// when its context ends.
	lock    chan struct{}
	current ekstoken.Token
}

func newTokenSource(mint func(context.Context) (ekstoken.Token, error), now func() time.Time) *tokenSource {
	return &tokenSource{mint: mint, now: now, lock: make(chan struct{}, 1)}
}

// token returns a token to send: the current one while it lasts, else a new one. refused, when
// not empty, is a token the cluster has just answered 401 to; if it is still the current one it is
// replaced, and if a concurrent request has replaced it already the replacement is returned, so a
// burst of 401s makes one new token, not one each.
func (s *tokenSource) token(ctx context.Context, refused string) (string, error) {
	select {
	case s.lock <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for an EKS token: %w", ctx.Err())
	}
	defer func() { <-s.lock }()
	if usable(s.current, refused, s.now()) {
		return s.current.Value, nil
	}
	t, err := s.mint(ctx)
	if err != nil {
		return "", fmt.Errorf("making an EKS token: %w", err)
	}
	s.current = t
	return t.Value, nil
}

// usable says whether tok may still be sent at now: there is one, it has not reached the expiry
// its generator gave it, and it is not the one the cluster has just refused.
func usable(tok ekstoken.Token, refused string, now time.Time) bool {
	return tok.Value != "" && tok.Value != refused && now.Before(tok.Expires)
}
