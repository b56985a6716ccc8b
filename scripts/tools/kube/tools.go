//go:build tools

// Package kube exists so `go mod tidy` keeps the commands scripts/tools-kube.sh builds — etcd, the
// control plane and kwok (kubectl only when asked) — and go.sum pins every module they need.
package kube

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
