package bench

import (
	"context"
	"testing"
)

func TestRunNodeSmall(t *testing.T) {
	r, err := RunNode(context.Background(), NodeConfig{Writes: 300, Writers: 8, Rounds: 1, Events: 20})
	if err != nil {
		t.Fatal(err)
	}
	if r.WritesPerSec <= 0 || r.BoundPerSec <= 0 || r.Ratio <= 0 || r.Bound6979PerSec <= 0 || r.Ratio6979 <= 0 || r.EventP50Ms <= 0 || r.EventHTTPP50Ms <= 0 || r.SerialPerSec <= 0 {
		t.Fatalf("a figure is missing: %+v", r)
	}
}
