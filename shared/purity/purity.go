// Package purity holds the check that keeps Tidegate's pure packages pure: numbers in, decisions
// out, nothing that reaches a cluster, AWS, the network or a clock. It has no code of its own;
// its test lists each pure package and what it must never import, however indirectly.
package purity
