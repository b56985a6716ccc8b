//go:build tools

// Package kube exists so `go mod tidy` keeps the control-plane commands and kwok that
// scripts/tools-kube.sh builds (kubectl only when asked), and go.sum pins every module they need.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
