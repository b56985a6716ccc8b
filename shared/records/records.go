// Package records provides what every store answers about the record it was asked for: that
// there is none, or that it changed under the caller. Callers test for them with errors.Is,
// whichever store answered.
package records

import "errors"

// ErrNotFound is a record that does not exist (or that the caller may not see).
var ErrNotFound = errors.New("not found")

// ErrStale is what a conditional write answers when the record is no longer in the state the
// write expected: another worker moved it first. The caller drops its step; nothing is lost.
var ErrStale = errors.New("the record changed under us")
