package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// versionsFile writes n versions of one space as JSON lines.
func versionsFile(t *testing.T, dir, name string, n int, seed uint64) string {
	t.Helper()
	var b strings.Builder
	err := enginetest.Corpus(enginetest.SpaceID("cli mirror"), enginetest.CorpusOptions{Versions: n, Seed: seed}, func(v *record.Version) error {
		j, err := v.MarshalJSON()
		b.Write(j)
		b.WriteByte('\n')
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := minca(t, "", args...)
	if code != 0 {
		t.Fatalf("minca %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

// exported is `store export` as a sorted set of lines.
func exported(t *testing.T, store string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(mustRun(t, "store", "export", "--store", store)), "\n")
	sort.Strings(lines)
	return lines
}

func sameExport(t *testing.T, a, b string) {
	t.Helper()
	x, y := exported(t, a), exported(t, b)
	if strings.Join(x, "\n") != strings.Join(y, "\n") {
		t.Fatalf("%s and %s hold different versions (%d and %d lines)", a, b, len(x), len(y))
	}
}

func field(t *testing.T, out, name string) float64 {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	switch v := m[name].(type) {
	case float64:
		return v
	case []any:
		return float64(len(v))
	}
	return 0
}

// backup, restore, compact and mirror on stores made by earlier runs.
func TestBackupRestoreCompactMirror(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	a, b, c := "pebble:"+filepath.Join(dir, "a"), "pebble:"+filepath.Join(dir, "b"), "pebble:"+filepath.Join(dir, "c")
	folder := "folder:" + filepath.Join(dir, "synced")
	mustRun(t, "store", "import", "--judge", "roots", "--store", a, versionsFile(t, dir, "v1.jsonl", 300, 1))

	out := mustRun(t, "backup", "--store", a, "--to", folder)
	if field(t, out, "versions") == 0 {
		t.Fatalf("backup wrote nothing: %s", out)
	}
	if out := mustRun(t, "backup", "--store", a, "--to", folder); field(t, out, "versions") != 0 {
		t.Fatalf("a second backup wrote again: %s", out)
	}
	out = mustRun(t, "restore", "--from", folder, "--store", b)
	if field(t, out, "stored") == 0 {
		t.Fatalf("restore stored nothing: %s", out)
	}
	sameExport(t, a, b)

	// More versions, another segment, then compaction of the two.
	mustRun(t, "store", "import", "--judge", "roots", "--store", a, versionsFile(t, dir, "v2.jsonl", 200, 2))
	mustRun(t, "backup", "--store", a, "--to", folder)
	out = mustRun(t, "compact", "--store", a, "--blobs", folder)
	if field(t, out, "rewrote") != 2 || field(t, out, "wrote") != 1 || field(t, out, "deleted") != 2 || field(t, out, "bytesFreed") == 0 {
		t.Fatalf("compact: %s", out)
	}

	// A third store joins by mirroring once, and holds what a holds.
	out = mustRun(t, "mirror", "--store", c, "--to", folder, "--once")
	if field(t, out, "stored") == 0 {
		t.Fatalf("mirror: %s", out)
	}
	sameExport(t, a, c)

	// Bad input: usage errors, not crashes.
	for _, args := range [][]string{
		{"restore", "--from", "ftp://x", "--store", b},
		{"backup", "--store", a},
		{"compact", "--store", a, "--blobs", "folder:" + filepath.Join(dir, "nothing")},
	} {
		if _, _, code := minca(t, "", args...); code == 0 {
			t.Errorf("minca %v succeeded", args)
		}
	}
	if _, _, code := minca(t, "", "mirror", "--help"); code != 0 {
		t.Error("mirror --help")
	}
}

// folder:PATH as a store: a local index under the cache directory, the
// folder durable; a second device (another cache) sees the same versions.
func TestFolderAsStore(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache1"))
	folder := "folder:" + filepath.Join(dir, "synced")
	mustRun(t, "store", "import", "--judge", "roots", "--store", folder, versionsFile(t, dir, "v.jsonl", 120, 3))
	first := exported(t, folder)
	if len(first) < 100 {
		t.Fatalf("folder store holds %d versions", len(first))
	}
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache2")) // another device
	if got := exported(t, folder); strings.Join(got, "\n") != strings.Join(first, "\n") {
		t.Fatalf("the second device reads %d versions, the first %d", len(got), len(first))
	}
	p := "pebble:" + filepath.Join(dir, "p")
	mustRun(t, "restore", "--from", folder, "--store", p)
	sameExport(t, folder, p)
}

// backup to S3 (gofakes3 on loopback) and restore from it, with credentials
// from the environment as a user would give them.
func TestBackupRestoreS3(t *testing.T) {
	be := s3mem.New()
	if err := be.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(be).Server())
	defer srv.Close()
	dir := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	url := "s3://bkt/backups/a?region=us-east-1&path-style=true&endpoint=" + srv.URL
	a, b := "pebble:"+filepath.Join(dir, "a"), "pebble:"+filepath.Join(dir, "b")
	mustRun(t, "store", "import", "--judge", "roots", "--store", a, versionsFile(t, dir, "v.jsonl", 150, 4))
	mustRun(t, "backup", "--store", a, "--to", url)
	mustRun(t, "restore", "--from", url, "--store", b)
	sameExport(t, a, b)
}
