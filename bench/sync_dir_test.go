package bench

import (
	"context"
	"testing"
)

// A second run into the --dir of a first measures stores of its own,
// not the first run's left in place.
func TestRunSyncTwiceIntoOneDir(t *testing.T) {
	dir := t.TempDir()
	cfg := SyncConfig{Dir: dir, Versions: 300, Big: 300, Live: 5, Peers: 2, Writers: 1, PerWriter: 2, Rounds: 1}
	for run := 1; run <= 2; run++ {
		r, err := RunSync(context.Background(), cfg)
		if err != nil {
			t.Fatalf("run %d into %s: %v", run, dir, err)
		}
		if r.Versions != cfg.Versions {
			t.Fatalf("run %d: result for %d versions, want %d", run, r.Versions, cfg.Versions)
		}
	}
}
