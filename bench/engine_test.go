package bench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/internal/race"
)

// The engine suites run at a small size, so they stay honest; the real
// sizes are in REPORT-engine.md.
func TestRunImportSmall(t *testing.T) {
	versions := 2000
	if race.Enabled {
		versions = 600 // each version costs several times more to import
	}
	r, err := RunImport(context.Background(), ImportConfig{CorpusConfig: CorpusConfig{Versions: versions}, Rounds: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Versions != versions || r.BoundPerSec <= 0 || r.PebbleRatio <= 0 || r.SQLiteRatio <= 0 {
		t.Fatalf("%+v", r)
	}
	t.Logf("%+v", r)
}

// ImportConfig.Stores names one backend: only it is imported into (the
// other's figures are zero), against the same bound; a name that is no
// backend is an error.
func TestRunImportOneStore(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.jsonl")
	if err := WriteCorpus(context.Background(), corpus, CorpusConfig{Versions: 300}); err != nil {
		t.Fatal(err)
	}
	r, err := RunImport(context.Background(), ImportConfig{Corpus: corpus, Rounds: 1, Dir: dir, Stores: []string{"sqlite"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Versions != 300 || r.BoundPerSec <= 0 || r.SQLiteRatio <= 0 || r.SQLiteCPUMicros <= 0 ||
		r.PebblePerS != 0 || r.PebbleRatio != 0 || r.PebbleCPUMicros != 0 {
		t.Fatalf("sqlite alone: %+v", r)
	}
	if _, err := RunImport(context.Background(), ImportConfig{Corpus: corpus, Rounds: 1, Dir: dir, Stores: []string{"bolt"}}); err == nil || !strings.Contains(err.Error(), `"bolt"`) {
		t.Fatalf("a backend that is none: %v", err)
	}
}

func TestRunReadSmall(t *testing.T) {
	r, err := RunRead(context.Background(), ReadConfig{CorpusConfig: CorpusConfig{Versions: 1000}, Rounds: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Records == 0 || r.Current.NsPerOp <= 0 || r.BareRead.NsPerOp <= 0 {
		t.Fatalf("%+v", r)
	}
	t.Logf("%+v", r)
}
