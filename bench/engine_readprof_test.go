package bench

import (
	"context"
	"testing"
)

// TestReadProfile is RunRead at a small size, for profiling reads
// (go test -run TestReadProfile -cpuprofile).
func TestReadProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("profiling aid")
	}
	r, err := RunRead(context.Background(), ReadConfig{CorpusConfig: CorpusConfig{Versions: 5000}, Rounds: 3, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
}
