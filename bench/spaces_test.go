package bench

import (
	"context"
	"testing"

	"github.com/minca-go/minca/internal/race"
)

// A small run of the spaces suite: it completes, every version stands, and
// each figure is measured.
func TestRunSpacesSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and imports a space")
	}
	cfg := SpacesConfig{Members: 60, Changes: 600, Records: 2000, Import: 1000, Judged: 200, Rounds: 1, Dir: t.TempDir()}
	if race.Enabled { // each change and record costs several times more
		cfg.Members, cfg.Changes, cfg.Records, cfg.Import, cfg.Judged = 30, 200, 600, 300, 100
	}
	r, err := RunSpaces(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.ReplayRatio <= 0 || r.HistoryHeapMB <= 0 || r.LoadFromStoreMs <= 0 || r.JudgeRatio <= 0 || r.DecideRatio <= 0 || r.ImportRatio <= 0 {
		t.Fatalf("%+v", r)
	}
	t.Logf("%+v", r)
}
