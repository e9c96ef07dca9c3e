package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// segmentFiles lists the segment files under a folder store, sorted.
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(dir, "segments"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".seg") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// Case 1 (issue 12): one byte flipped in a folder segment. restore and
// mirror --once exit 1 naming it and the versions its trailer held, and
// restore everything else; store check of the folder store prints it as
// a problem line; once the good bytes are back, restore succeeds and
// holds everything.
func TestCorruptSegmentCLI(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	a, b, c := "pebble:"+filepath.Join(dir, "a"), "pebble:"+filepath.Join(dir, "b"), "pebble:"+filepath.Join(dir, "c")
	synced := filepath.Join(dir, "synced")
	mustRun(t, "store", "import", "--store", a, versionsFile(t, dir, "v1.jsonl", 40, 1))
	mustRun(t, "backup", "--store", a, "--to", "folder:"+synced)
	mustRun(t, "store", "import", "--store", a, versionsFile(t, dir, "v2.jsonl", 30, 2))
	out := mustRun(t, "backup", "--store", a, "--to", "folder:"+synced)
	held := field(t, out, "versions")
	segs := segmentFiles(t, synced)
	if len(segs) != 2 {
		t.Fatalf("segments %v", segs)
	}
	good, err := os.ReadFile(segs[1])
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0x04
	if err := os.WriteFile(segs[1], flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	name := "segments/" + filepath.Base(filepath.Dir(segs[1])) + "/" + filepath.Base(segs[1])
	for _, args := range [][]string{
		{"restore", "--from", "folder:" + synced, "--store", b},
		{"mirror", "--once", "--store", c, "--to", "folder:" + synced},
	} {
		out, errs, code := minca(t, "", args...)
		if code != 1 {
			t.Fatalf("%s over a flipped byte: exit %d\n%s", args[0], code, errs)
		}
		if !strings.Contains(errs, name) || !strings.Contains(errs, "versions by its trailer") {
			t.Fatalf("%s does not name the segment and what it held:\n%s", args[0], errs)
		}
		var res struct {
			Bad []struct {
				Name     string `json:"name"`
				Versions *int   `json:"versions"`
			} `json:"bad"`
		}
		if args[0] == "restore" {
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Bad) != 1 || res.Bad[0].Name != name || res.Bad[0].Versions == nil || float64(*res.Bad[0].Versions) != held {
				t.Fatalf("restore's summary: %s (%v)", out, err)
			}
		}
	}
	// Everything else was restored.
	first := len(exported(t, b))
	if first == 0 || float64(first) >= float64(len(exported(t, a))) {
		t.Fatalf("restored %d of %d versions", first, len(exported(t, a)))
	}
	out, _, code := minca(t, "", "store", "check", "--store", "folder:"+synced)
	if code != 1 || !strings.Contains(out, `{"problem":"segment `+name) {
		t.Fatalf("store check of the folder: exit %d\n%s", code, out)
	}
	// The sync service delivers the good copy.
	if err := os.WriteFile(segs[1], good, 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "restore", "--from", "folder:"+synced, "--store", b)
	sameExport(t, a, b)
	mustRun(t, "store", "check", "--store", "folder:"+synced)
}

// Case 7 (issue 12): a folder a store backed up to, removed and set up
// again, is refused by backup naming both store ids, unless --adopt.
func TestReplacedFolderCLI(t *testing.T) {
	dir := t.TempDir()
	a := "pebble:" + filepath.Join(dir, "a")
	synced := filepath.Join(dir, "synced")
	mustRun(t, "store", "import", "--store", a, versionsFile(t, dir, "v.jsonl", 20, 3))
	mustRun(t, "backup", "--store", a, "--to", "folder:"+synced)
	marker, _ := os.ReadFile(filepath.Join(synced, "minca-store.json"))
	var m struct{ ID string }
	_ = json.Unmarshal(marker, &m)
	if err := os.RemoveAll(synced); err != nil {
		t.Fatal(err)
	}
	_, errs, code := minca(t, "", "backup", "--store", a, "--to", "folder:"+synced)
	if code == 0 || !strings.Contains(errs, m.ID) || !strings.Contains(errs, "refusing") {
		t.Fatalf("backup to a replaced folder: exit %d\n%s", code, errs)
	}
	out := mustRun(t, "backup", "--store", a, "--to", "folder:"+synced, "--adopt")
	if field(t, out, "versions") == 0 {
		t.Fatalf("adopting wrote nothing: %s", out)
	}
	b := "pebble:" + filepath.Join(dir, "b")
	mustRun(t, "restore", "--from", "folder:"+synced, "--store", b)
	sameExport(t, a, b)
	if out, errs, _ := minca(t, "", "mirror", "--help"); !strings.Contains(out+errs, "gone-grace") || !strings.Contains(out+errs, "adopt") {
		t.Fatalf("mirror --help:\n%s%s", out, errs)
	}
}

// Case 1 on S3: a segment object with a byte flipped is named by restore
// (exit 1) and by store check of the s3: store.
func TestCorruptSegmentS3CLI(t *testing.T) {
	be := s3mem.New()
	if err := be.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(be).Server())
	defer srv.Close()
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	url := "s3://bkt/backups/a?region=us-east-1&path-style=true&endpoint=" + srv.URL
	a, b := "pebble:"+filepath.Join(dir, "a"), "pebble:"+filepath.Join(dir, "b")
	mustRun(t, "store", "import", "--store", a, versionsFile(t, dir, "v.jsonl", 30, 4))
	mustRun(t, "backup", "--store", a, "--to", url)
	prefix := "backups/a/segments/"
	list, err := be.ListBucket("bkt", &gofakes3.Prefix{Prefix: prefix, HasPrefix: true}, gofakes3.ListBucketPage{})
	if err != nil || len(list.Contents) != 1 {
		t.Fatalf("listing: %v %v", list, err)
	}
	key := list.Contents[0].Key
	obj, err := be.GetObject("bkt", key, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(obj.Contents)
	obj.Contents.Close()
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x80
	// Deleted and put again, so the server keeps no checksum of the old
	// bytes: the damage is in what was stored, as a bit flip at rest.
	if _, err := be.DeleteObject("bkt", key); err != nil {
		t.Fatal(err)
	}
	if _, err := be.PutObject("bkt", key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(key, "backups/a/")
	if _, errs, code := minca(t, "", "restore", "--from", url, "--store", b); code != 1 || !strings.Contains(errs, name) || !strings.Contains(errs, "segment/checksum") {
		t.Fatalf("restore: exit %d\n%s", code, errs)
	}
	if out, errs, code := minca(t, "", "store", "check", "--store", url); code != 1 || !strings.Contains(out, `{"problem":"segment `+name) {
		t.Fatalf("store check: exit %d\n%s%s", code, out, errs)
	}
}
