package bench

import (
	"context"
	"testing"
)

// The engine suites run at a small size, so they stay honest; the real
// sizes are in REPORT-engine.md.
func TestRunImportSmall(t *testing.T) {
	r, err := RunImport(context.Background(), ImportConfig{CorpusConfig: CorpusConfig{Versions: 2000}, Rounds: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Versions != 2000 || r.BoundPerSec <= 0 || r.PebbleRatio <= 0 || r.SQLiteRatio <= 0 {
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
