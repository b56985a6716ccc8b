package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestDevRefusesAMadeUpTidegateKey: `tidegate dev --api-key` with a key that begins with tg_ but
// is not one Tidegate made stops before starting anything, saying what to choose instead: the API
// refuses such a key without looking it up, so the dev tenant could never use it.
func TestDevRefusesAMadeUpTidegateKey(t *testing.T) {
	cmd := root()
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SetArgs([]string{"dev", "--api-key", "tg_mine", "--dir", t.TempDir()})
	// Cancelled, so that were the key let through, the stack would stop at once rather than run.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := cmd.ExecuteContext(ctx); err == nil || !strings.Contains(err.Error(), "without the tg_ prefix") {
		t.Errorf("tidegate dev --api-key tg_mine = %v; want it refused, saying to choose a key without the tg_ prefix", err)
	}
}
