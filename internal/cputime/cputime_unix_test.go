//go:build unix

package cputime

import (
	"testing"
	"time"
)

// The CPU time grows with work done on a core, and never goes back.
func TestProcessGrowsWithWork(t *testing.T) {
	before := Process()
	if before <= 0 {
		t.Fatalf("Process() = %v before any work; want > 0 (the test binary has run)", before)
	}
	x := uint64(1)
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	after := Process()
	if after-before < 10*time.Millisecond {
		t.Errorf("Process() grew %v over 50 ms of work on a core (x=%d); want ≥ 10 ms", after-before, x)
	}
}
