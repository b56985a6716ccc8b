package main

import (
	"math"
	"testing"
)

func TestSlope(t *testing.T) {
	tests := []struct {
		name string
		x, y []float64
		want float64
		ok   bool
	}{
		{"linear", []float64{1e3, 1e4, 1e5}, []float64{2, 20, 200}, 1, true},
		{"flat", []float64{1e3, 1e4}, []float64{7, 7}, 0, true},
		{"square", []float64{10, 100}, []float64{1, 100}, 2, true},
		{"a zero cost", []float64{10, 100}, []float64{0, 5}, 0, false},
		{"one size", []float64{10}, []float64{3}, 0, false},
		{"one size twice", []float64{10, 10}, []float64{3, 4}, 0, false},
	}
	for _, tt := range tests {
		got, ok := Slope(tt.x, tt.y)
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Slope(%v, %v) = %v, %v; want %v, %v (%s)", tt.x, tt.y, got, ok, tt.want, tt.ok, tt.name)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 100000: "100,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestAt(t *testing.T) {
	rows := []row{
		{op: "op", n: 100, read: 10, write: 1},
		{op: "op", n: 1000, read: 100, write: 1},
		{op: "op", n: 10000, read: 1000, write: 2},
		{op: "other", n: 5, read: 7},
	}
	tests := []struct {
		op          string
		n           int
		read, write float64
		ok          bool
	}{
		{"op", 550, 55, 1, true},        // between the two smallest
		{"op", 2000, 200, 1.1111, true}, // between the two largest
		{"op", 20000, 2000, 3.1111, true},
		{"op", 100, 10, 1, true},
		{"other", 50, 70, 0, true}, // one size: scaled
		{"missing", 50, 0, 0, false},
	}
	for _, tt := range tests {
		got, ok := at(rows, tt.op, tt.n)
		if ok != tt.ok || math.Abs(got.read-tt.read) > 1e-3 || math.Abs(got.write-tt.write) > 1e-3 {
			t.Errorf("at(%s, %d) = %.4f RRU, %.4f WRU, %v; want %.4f, %.4f, %v", tt.op, tt.n, got.read, got.write, ok, tt.read, tt.write, tt.ok)
		}
	}
}
