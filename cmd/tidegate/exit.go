package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tidegate/tidegate/shared/apiclient"
)

// errQuiet ends a command with a non-zero exit once its output has said why (a dry run that found
// violations), so nothing more is printed.
var errQuiet = errors.New("see above")

// reportError prints why a command failed: one line with the API's detail and request id, then
// each field or policy violation the API named, to fix them all in one go.
func reportError(w io.Writer, err error) {
	if errors.Is(err, errQuiet) {
		return
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(w, "tidegate: interrupted")
		return
	}
	fmt.Fprintln(w, "tidegate:", err)
	var apiErr *apiclient.Error
	if errors.As(err, &apiErr) {
		for _, p := range apiErr.Problems() {
			fmt.Fprintln(w, "  -", p)
		}
	}
}
