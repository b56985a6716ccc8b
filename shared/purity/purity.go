// Package purity holds the check that keeps Tidegate's pure packages pure: numbers in, decisions
// out, nothing that reaches a cluster, AWS, the network, the clock or the environment. It has no
// code of its own; its test lists each pure package with what it must never depend on, however
// indirectly (read with go list -deps), what its own files must never import, and the calls that
// read the clock or the environment, which its own files must never make (read with go/parser).
package purity
