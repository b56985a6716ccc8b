//go:build tools

// Package etcd exists so `go mod tidy` keeps etcd's server command, and go.sum pins every module it
// needs.
package etcd

import _ "go.etcd.io/etcd/server/v3"
