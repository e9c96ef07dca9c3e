package bench

import (
	"context"
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
