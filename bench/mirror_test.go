package bench

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// s3Server starts an S3 server in process (gofakes3 on loopback) with
// bucket "bench", credentials in the environment as a user gives them, and
// returns a store URL under it.
func s3Server(t *testing.T) string {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket("bench"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(be).Server())
	t.Cleanup(srv.Close)
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_ACCESS_KEY_ID", "bench")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "bench")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return "s3://bench/backup?region=us-east-1&path-style=true&endpoint=" + srv.URL
}

// The mirror suite runs end to end on a small corpus, and its figures are
// those of a working backup: something stored, fewer bytes than the JSON,
// every segment listed, requests made to S3.
func TestRunMirrorSmall(t *testing.T) {
	url := s3Server(t)
	r, err := RunMirror(context.Background(), MirrorConfig{Versions: 400, Segments: 300, Rounds: 1, Dir: t.TempDir(), S3: url})
	if err != nil {
		t.Fatal(err)
	}
	if r.Versions == 0 || r.SegmentBytes == 0 || r.BytesRatio <= 0 || r.BytesRatio >= 1 || r.RestoreRatio <= 0 || r.ListMillis <= 0 || r.BackupRequestsPer1k <= 0 || r.RestoreRequestsPer1k <= 0 {
		t.Fatalf("%+v", r)
	}
	t.Logf("%+v", r)
	// The same S3 prefix again holds the first run's segments: refused,
	// since its restore would count and hold another store's.
	if _, err := RunMirror(context.Background(), MirrorConfig{Versions: 40, Segments: 10, Rounds: 1, Dir: t.TempDir(), S3: url}); err == nil {
		t.Fatal("a second run into a prefix with segments was not refused")
	}
}

// Without an S3 store the suite measures the folder alone, and leaves the
// S3 figures out.
func TestRunMirrorFolderOnly(t *testing.T) {
	r, err := RunMirror(context.Background(), MirrorConfig{Versions: 200, Segments: 50, Rounds: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Versions == 0 || r.RestoreRatio <= 0 || r.BackupRequestsPer1k != 0 || r.RestoreRequestsPer1k != 0 {
		t.Fatalf("%+v", r)
	}
}
