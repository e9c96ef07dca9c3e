package bench

import (
	"context"
	"testing"

	"github.com/minca-go/minca/internal/race"
)

// The query suite at a small size; the full size is in REPORT-query.md.
func TestRunQuerySmall(t *testing.T) {
	records := 3000
	if race.Enabled {
		records = 1000 // each record costs several times more to write
	}
	r, err := RunQuery(context.Background(), QueryConfig{Records: records, Rounds: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Records != records || r.BareScan.NsPerOp <= 0 || r.FirstRatio <= 0 || r.IndexedRatio <= 0 || r.UnindexedRatio <= 0 || r.NewestRatio <= 0 {
		t.Fatalf("%+v", r)
	}
	t.Logf("%+v", r)
}
