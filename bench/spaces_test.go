package bench

import (
	"context"
	"testing"
)

// A small run of the spaces suite: it completes, every version stands, and
// each figure is measured.
func TestRunSpacesSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and imports a space")
	}
	r, err := RunSpaces(context.Background(), SpacesConfig{Members: 60, Changes: 600, Records: 2000, Import: 1000, Judged: 200, Rounds: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.ReplayRatio <= 0 || r.HistoryHeapMB <= 0 || r.LoadFromStoreMs <= 0 || r.JudgeRatio <= 0 || r.DecideRatio <= 0 || r.ImportRatio <= 0 {
		t.Fatalf("%+v", r)
	}
	t.Logf("%+v", r)
}
