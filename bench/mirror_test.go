package bench

import (
	"context"
	"testing"
)

// The mirror suite runs end to end on a small corpus, and its figures are
// those of a working backup: something stored, fewer bytes than the JSON,
// every segment listed.
func TestRunMirrorSmall(t *testing.T) {
	r, err := RunMirror(context.Background(), MirrorConfig{Versions: 400, Segments: 300, Rounds: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Versions == 0 || r.SegmentBytes == 0 || r.BytesRatio <= 0 || r.BytesRatio >= 1 || r.RestoreRatio <= 0 || r.ListMillis <= 0 || r.BackupRequestsPer1k <= 0 {
		t.Fatalf("%+v", r)
	}
	t.Logf("%+v", r)
}
