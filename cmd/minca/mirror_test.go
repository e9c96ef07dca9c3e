package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// mustRun runs minca in process and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	return (&device{t: t}).mustRun(args...)
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
	t.Parallel()
	dir := t.TempDir()
	d := &device{t: t, cache: filepath.Join(dir, "cache")}
	a, b, c := "pebble:"+filepath.Join(dir, "a"), "pebble:"+filepath.Join(dir, "b"), "pebble:"+filepath.Join(dir, "c")
	folder := "folder:" + filepath.Join(dir, "synced")
	d.mustRun("store", "import", "--judge", "roots", "--store", a, versionsFile(t, dir, "v1.jsonl", 300, 1))

	out := d.mustRun("backup", "--store", a, "--to", folder)
	if field(t, out, "versions") == 0 {
		t.Fatalf("backup wrote nothing: %s", out)
	}
	if out := d.mustRun("backup", "--store", a, "--to", folder); field(t, out, "versions") != 0 {
		t.Fatalf("a second backup wrote again: %s", out)
	}
	out = d.mustRun("restore", "--from", folder, "--store", b)
	if field(t, out, "stored") == 0 {
		t.Fatalf("restore stored nothing: %s", out)
	}
	d.sameExport(a, b)

	// More versions, another segment, then compaction of the two.
	d.mustRun("store", "import", "--judge", "roots", "--store", a, versionsFile(t, dir, "v2.jsonl", 200, 2))
	d.mustRun("backup", "--store", a, "--to", folder)
	out = d.mustRun("compact", "--store", a, "--blobs", folder)
	if field(t, out, "rewrote") != 2 || field(t, out, "wrote") != 1 || field(t, out, "deleted") != 2 || field(t, out, "bytesFreed") == 0 {
		t.Fatalf("compact: %s", out)
	}
	// Its sizes add up: the net change is what was written less what was freed.
	if b, a, c := field(t, out, "bytesBefore"), field(t, out, "bytesAfter"), field(t, out, "bytesChange"); a-b != c || c != field(t, out, "bytesWritten")-field(t, out, "bytesFreed") || c >= 0 {
		t.Fatalf("compact's sizes do not add up: %s", out)
	}

	// A third store joins by mirroring once, and holds what a holds.
	out = d.mustRun("mirror", "--store", c, "--to", folder, "--once")
	if field(t, out, "stored") == 0 {
		t.Fatalf("mirror: %s", out)
	}
	d.sameExport(a, c)

	// Bad input: usage errors, not crashes.
	for _, args := range [][]string{
		{"restore", "--from", "ftp://x", "--store", b},
		{"backup", "--store", a},
		{"compact", "--store", a, "--blobs", "folder:" + filepath.Join(dir, "nothing")},
	} {
		if _, _, code := d.minca("", args...); code == 0 {
			t.Errorf("minca %v succeeded", args)
		}
	}
	if _, _, code := d.minca("", "mirror", "--help"); code != 0 {
		t.Error("mirror --help")
	}
}

// folder:PATH as a store: a local index under the cache directory, the
// folder durable; a second device (another cache) sees the same versions.
func TestFolderAsStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := &device{t: t, cache: filepath.Join(dir, "cache1")}
	folder := "folder:" + filepath.Join(dir, "synced")
	d.mustRun("store", "import", "--judge", "roots", "--store", folder, versionsFile(t, dir, "v.jsonl", 120, 3))
	first := d.exported(folder)
	if len(first) < 100 {
		t.Fatalf("folder store holds %d versions", len(first))
	}
	d.cache = filepath.Join(dir, "cache2") // another device
	if got := d.exported(folder); strings.Join(got, "\n") != strings.Join(first, "\n") {
		t.Fatalf("the second device reads %d versions, the first %d", len(got), len(first))
	}
	p := "pebble:" + filepath.Join(dir, "p")
	d.mustRun("restore", "--from", folder, "--store", p)
	d.sameExport(folder, p)

	// A restore into a folder store flushes to that folder: a third
	// device, with an index of its own, reads it all there.
	other := "folder:" + filepath.Join(dir, "other")
	d.mustRun("restore", "--from", folder, "--store", other)
	d.cache = filepath.Join(dir, "cache3")
	d.sameExport(folder, other)

	// A store is not mirrored to its own blob store by a second mirror.
	if _, errOut, code := d.minca("", "mirror", "--store", folder, "--to", folder, "--once"); code != exitUsage || !strings.Contains(errOut, "own blob store") {
		t.Fatalf("mirror of a folder store to itself: exit %d %s", code, errOut)
	}
}

// Case 7 through --store folder: (issue 12): the store's index remembers
// the folder, so an emptied folder is refused by import (exit 1, naming
// the store it held, nothing written there), as is another store set up
// there (naming both); store import --adopt takes it and exports
// everything there again.
func TestFolderStoreEmptiedCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	synced := filepath.Join(dir, "synced")
	folder := "folder:" + synced
	markerID := func() string {
		b, err := os.ReadFile(filepath.Join(synced, "minca-store.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ ID string }
		if err := json.Unmarshal(b, &m); err != nil || m.ID == "" {
			t.Fatalf("marker %s: %v", b, err)
		}
		return m.ID
	}
	d := &device{t: t, cache: filepath.Join(dir, "cache1")}
	d.mustRun("store", "import", "--judge", "roots", "--store", folder, versionsFile(t, dir, "v1.jsonl", 40, 7))
	held := d.exported(folder)
	was := markerID()
	es, _ := os.ReadDir(synced)
	for _, e := range es {
		if err := os.RemoveAll(filepath.Join(synced, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	v2 := versionsFile(t, dir, "v2.jsonl", 10, 8)
	_, errs, code := d.minca("", "store", "import", "--judge", "roots", "--store", folder, v2)
	if code != exitFailed || !strings.Contains(errs, was) || !strings.Contains(errs, "refusing") || !strings.Contains(errs, "--adopt") {
		t.Fatalf("import into an emptied folder store: exit %d, not naming the store it held and --adopt\n%s", code, errs)
	}
	if es, _ := os.ReadDir(synced); len(es) != 0 {
		t.Fatalf("a refused import wrote %v", es)
	}

	d.cache = filepath.Join(dir, "cache2") // another device sets it up anew
	d.mustRun("store", "import", "--judge", "roots", "--store", folder, versionsFile(t, dir, "v3.jsonl", 5, 9))
	now := markerID()
	d.cache = filepath.Join(dir, "cache1")
	for _, args := range [][]string{
		{"store", "import", "--judge", "roots", "--store", folder, v2},
		{"store", "stats", "--store", folder},
	} {
		_, errs, code := d.minca("", args...)
		if code != exitFailed || !strings.Contains(errs, was) || !strings.Contains(errs, now) {
			t.Fatalf("%s on a folder store replaced by another: exit %d\n%s", args[1], code, errs)
		}
	}
	d.mustRun("store", "import", "--judge", "roots", "--adopt", "--store", folder, v2)
	all := d.exported(folder)
	if len(all) <= len(held) {
		t.Fatalf("after adopting: %d versions, held %d before", len(all), len(held))
	}
	d.cache = filepath.Join(dir, "cache3") // a third device reads it all there
	if got := d.exported(folder); strings.Join(got, "\n") != strings.Join(all, "\n") {
		t.Fatalf("the third device reads %d versions, the first %d", len(got), len(all))
	}
}

// backup to S3 (gofakes3 on loopback) and restore from it, with credentials
// from the environment as a user would give them.
func TestBackupRestoreS3(t *testing.T) {
	t.Parallel()
	d := &device{t: t, cache: filepath.Join(t.TempDir(), "cache")}
	dir := t.TempDir()
	f := newFakeS3(t, nil)
	url := f.url("backups/a")
	a, b := "pebble:"+filepath.Join(dir, "a"), "pebble:"+filepath.Join(dir, "b")
	d.mustRun("store", "import", "--judge", "roots", "--store", a, versionsFile(t, dir, "v.jsonl", 150, 4))
	d.mustRun("backup", "--store", a, "--to", url)
	d.mustRun("restore", "--from", url, "--store", b)
	d.sameExport(a, b)
}

// fakeS3 is gofakes3 on loopback with bucket "bkt". The credentials are
// in the environment as a user would give them (testS3Environment).
type fakeS3 struct {
	be  *s3mem.Backend
	srv *httptest.Server
}

// newFakeS3 starts the server; wrap, if set, sees each request first and
// passes it on (or not) to gofakes3.
func newFakeS3(t *testing.T, wrap func(next http.Handler) http.Handler) *fakeS3 {
	t.Helper()
	f := &fakeS3{be: s3mem.New()}
	if err := f.be.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	var h http.Handler = gofakes3.New(f.be).Server()
	if wrap != nil {
		h = wrap(h)
	}
	f.srv = httptest.NewServer(h)
	t.Cleanup(f.srv.Close)
	return f
}

// url is the s3:// URL of a prefix of the bucket.
func (f *fakeS3) url(prefix string) string {
	return "s3://bkt/" + prefix + "?region=us-east-1&path-style=true&endpoint=" + f.srv.URL
}

// keys lists the keys under prefix.
func (f *fakeS3) keys(t *testing.T, prefix string) []string {
	t.Helper()
	l, err := f.be.ListBucket("bkt", &gofakes3.Prefix{Prefix: prefix, HasPrefix: true}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range l.Contents {
		out = append(out, o.Key)
	}
	return out
}

// empty deletes every object under prefix.
func (f *fakeS3) empty(t *testing.T, prefix string) {
	t.Helper()
	for _, k := range f.keys(t, prefix) {
		if _, err := f.be.DeleteObject("bkt", k); err != nil {
			t.Fatal(err)
		}
	}
}

// --timeout and --connect-timeout (issue 12, cases 5 and 13) reach the S3
// backend on every verb that may open S3: against a server that takes
// connections and never answers, each verb gives up within a few seconds
// (the defaults would take 30), says on stderr that it is retrying and
// where, and exits 4, creating nothing.
func TestS3TimeoutFlags(t *testing.T) {
	t.Parallel()
	quit := make(chan struct{})
	f := newFakeS3(t, func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select { // a stalled server
			case <-r.Context().Done():
			case <-quit:
			}
		})
	})
	t.Cleanup(func() { close(quit) })
	dir := t.TempDir()
	d := &device{t: t, cache: filepath.Join(dir, "cache")}
	url := f.url("p")
	a := "pebble:" + filepath.Join(dir, "a")
	d.mustRun("store", "import", "--judge", "roots", "--store", a, versionsFile(t, dir, "v.jsonl", 5, 10))
	host := strings.TrimPrefix(f.srv.URL, "http://")
	for _, args := range [][]string{
		{"store", "stats", "--store", url},
		{"store", "import", "--judge", "roots", "--store", url, filepath.Join(dir, "v.jsonl")},
		{"store", "check", "--judge", "roots", "--store", url},
		{"restore", "--from", url, "--store", "pebble:" + filepath.Join(dir, "b")},
		{"backup", "--store", a, "--to", url},
		{"mirror", "--once", "--store", a, "--to", url},
		{"compact", "--store", a, "--blobs", url},
		{"bench", "mirror", "--versions", "40", "--segments", "5", "--rounds", "1", "--dir", filepath.Join(dir, "bench"), "--s3", url},
	} {
		// --connect-timeout bounds the opening as a whole (credentials,
		// the store's local state, the first requests): on a loaded
		// machine under -race the steps before the first request have
		// taken 1.7 s, so 5 s leaves the time for a retry, which the
		// line on stderr shows.
		args = append(args, "--timeout", "200ms", "--connect-timeout", "5s")
		start := time.Now()
		_, errs, code := d.minca("", args...)
		took := time.Since(start)
		// Without the flags reaching the backend, each would take 30 s
		// and more; with them, at most about five, more on a busy machine.
		if code != exitUnreachable || took > 15*time.Second {
			t.Fatalf("minca %s: exit %d after %v\n%s", strings.Join(args, " "), code, took, errs)
		}
		if !strings.Contains(errs, "retry") || !strings.Contains(errs, host) {
			t.Fatalf("minca %s: no retry line naming the endpoint on stderr:\n%s", strings.Join(args, " "), errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); err == nil {
		t.Fatal("a restore from an unreachable bucket made its store")
	}
	if _, _, code := d.minca("", "store", "stats", "--store", url, "--timeout", "-1s"); code != exitUsage {
		t.Fatalf("--timeout -1s: exit %d", code)
	}
}
