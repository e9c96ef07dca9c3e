package bench

import (
	"context"
	"testing"
)

// A small run of the private import bench: every version of each corpus
// stands in each store (importAll checks), and the figures are filled.
func TestPrivateImportSmall(t *testing.T) {
	r, err := RunPrivateImport(context.Background(), PrivateImportConfig{Versions: 300, Rounds: 1, Batch: 100, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.PublicPerSec <= 0 || r.MemberPerSec <= 0 || r.KeylessPerSec <= 0 || len(r.MemberRatios) != 1 {
		t.Fatalf("figures missing: %+v", r)
	}
}
