package bench

import (
	"context"
	"testing"
)

// The carry suite runs, every version stands on both sides, and it
// reports a ratio from figures it measured.
func TestRunCarrySmall(t *testing.T) {
	r, err := RunCarry(context.Background(), CarryConfig{Versions: 300, Rounds: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Member.NsPerOp <= 0 || r.Carrier.NsPerOp <= 0 || r.Ratio != r.Carrier.NsPerOp/r.Member.NsPerOp {
		t.Fatalf("%+v", r)
	}
}
