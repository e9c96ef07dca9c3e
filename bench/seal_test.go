package bench

import (
	"context"
	"testing"

	"github.com/minca-go/minca/canonical"
)

func TestRunSealMeasures(t *testing.T) {
	if testing.Short() {
		t.Skip("measures for a few seconds")
	}
	r, err := RunSeal(context.Background(), SealConfig{Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.BodyBytes != 600 || r.PlaintextBytes < 600 {
		t.Fatalf("body %d, plaintext %d", r.BodyBytes, r.PlaintextBytes)
	}
	for name, m := range map[string]Measure{"bareSeal": r.BareSeal, "bareOpen": r.BareOpen, "seal": r.Seal, "open": r.Open,
		"sealBody": r.SealBody, "openBody": r.OpenBody, "box": r.Box, "openBox": r.OpenBox} {
		if m.NsPerOp <= 0 {
			t.Fatalf("%s measured nothing", name)
		}
	}
	// The ratios depend on the machine's load and are reported, not
	// asserted; each must only be a ratio of two measurements.
	if r.SealRatio <= 0 || r.OpenRatio <= 0 || len(r.SealRatios) != 1 {
		t.Fatalf("ratios %+v", r)
	}
}

func TestSealBodyOf(t *testing.T) {
	for _, n := range []int{44, 600, 4096} {
		b, err := SealBodyOf(n)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := canonical.Marshal(b); len(got) != n {
			t.Fatalf("a body of %d bytes is %d", n, len(got))
		}
	}
	if _, err := SealBodyOf(10); err == nil {
		t.Fatal("a body of 10 bytes")
	}
}
