package bench

import (
	"context"
	"testing"
)

// The query suite at a small size; the full size is in REPORT-query.md.
func TestRunQuerySmall(t *testing.T) {
	r, err := RunQuery(context.Background(), QueryConfig{Records: 3000, Rounds: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Records != 3000 || r.BareScan.NsPerOp <= 0 || r.FirstRatio <= 0 || r.IndexedRatio <= 0 || r.UnindexedRatio <= 0 || r.NewestRatio <= 0 {
		t.Fatalf("%+v", r)
	}
	t.Logf("%+v", r)
}
