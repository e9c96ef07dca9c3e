package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
)

// put --attach uploads files and names them; file ls lists them held;
// file get writes their bytes to stdout or a path; a file not held is
// exit 3, a hash that is not one exit 2, an --attach path that is not
// there exit 2 with nothing written.
func TestFileVerbs(t *testing.T) {
	t.Parallel()
	dir, work := t.TempDir(), t.TempDir()
	if _, c := nodeCLI(t, "", "init", "--dir", dir); c != 0 {
		t.Fatal("init")
	}
	out, c := nodeCLI(t, "", "space", "create", "album", "--dir", dir, "--roles", `{"writer":[{"cmd":"/record"}]}`)
	if c != 0 {
		t.Fatal("space create")
	}
	sp := jsonField(t, out, "id")
	one, two := filepath.Join(work, "one.bin"), filepath.Join(work, "two.txt")
	big := bytes.Repeat([]byte("0123456789abcdef"), 70000)
	os.WriteFile(one, big, 0o600)
	os.WriteFile(two, []byte("second"), 0o600)
	out, c = nodeCLI(t, `{"title":"trip"}`, "put", sp, "app.album", "--attach", one, "--attach", two, "--dir", dir)
	if c != 0 || !strings.Contains(out, canonical.IDOf(big).String()) {
		t.Fatalf("put --attach: %d %q", c, out)
	}
	key := jsonField(t, out, "key")
	out, c = nodeCLI(t, "", "file", "ls", sp, key, "--dir", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if c != 0 || len(lines) != 2 || !strings.Contains(lines[0], `"held":true`) || !strings.Contains(lines[1], `"size":6`) {
		t.Fatalf("file ls: %d %q", c, out)
	}
	out, c = nodeCLI(t, "", "file", "get", sp, canonical.IDOf([]byte("second")).String(), "--dir", dir)
	if c != 0 || out != "second" {
		t.Fatalf("file get to stdout: %d %q", c, out)
	}
	dst := filepath.Join(work, "copy.bin")
	out, c = nodeCLI(t, "", "file", "get", sp, canonical.IDOf(big).String(), "-o", dst, "--dir", dir)
	if got, _ := os.ReadFile(dst); c != 0 || !bytes.Equal(got, big) || jsonField(t, out, "path") != dst {
		t.Fatalf("file get -o: %d %q", c, out)
	}
	if _, c = nodeCLI(t, "", "file", "get", sp, canonical.IDOf([]byte("nowhere")).String(), "--dir", dir); c != exitNotFound {
		t.Fatalf("a file not held: exit %d, want %d", c, exitNotFound)
	}
	if _, c = nodeCLI(t, "", "file", "get", sp, "nothash", "--dir", dir); c != exitUsage {
		t.Fatalf("a hash that is not one: exit %d, want %d", c, exitUsage)
	}
	if _, c = nodeCLI(t, `{"title":"x"}`, "put", sp, "app.album", "--attach", filepath.Join(work, "absent"), "--dir", dir); c != exitUsage {
		t.Fatalf("--attach of a path not there: exit %d, want %d", c, exitUsage)
	}
	if _, c = nodeCLI(t, "", "file", "ls", sp, "no-such-key", "--dir", dir); c != exitNotFound {
		t.Fatalf("file ls of no record: exit %d, want %d", c, exitNotFound)
	}
}

// store check reads every held file against its hash: a damaged one is
// named and the check exits 1; a store restored from a backup of the
// node before the damage holds the file whole, passes, and gives back
// its bytes; with its files index damaged, the check names what is wrong.
func TestStoreCheckVerifiesFiles(t *testing.T) {
	t.Parallel()
	a, r, work := t.TempDir(), t.TempDir(), t.TempDir()
	if _, c := nodeCLI(t, "", "init", "--dir", a); c != 0 {
		t.Fatal("init")
	}
	out, c := nodeCLI(t, "", "space", "create", "album", "--private", "--dir", a, "--roles", `{"writer":[{"cmd":"/record"}]}`)
	if c != 0 {
		t.Fatal("space create")
	}
	sp := jsonField(t, out, "id")
	photo := filepath.Join(work, "photo.bin")
	data := bytes.Repeat([]byte("a photo, 5 MiB and a bit "), 5<<20/25+3)
	os.WriteFile(photo, data, 0o600)
	out, c = nodeCLI(t, `{"title":"trip"}`, "put", sp, "app.album", "--attach", photo, "--dir", a)
	if c != 0 {
		t.Fatal("put --attach")
	}
	key := jsonField(t, out, "key")
	out, c = nodeCLI(t, "", "file", "ls", sp, key, "--dir", a)
	if c != 0 {
		t.Fatal("file ls")
	}
	hash := jsonField(t, out, "hash")
	backup := "folder:" + filepath.Join(work, "backup")
	mustRun(t, "backup", "--to", backup, "--dir", a)
	mustRun(t, "store", "check", "--store", filepath.Join(a, "store"))

	held := filepath.Join(a, "store", "files", hash)
	b, err := os.ReadFile(held)
	if err != nil {
		t.Fatalf("the held file is not where docs/stores.md says: %v", err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(held, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := minca(t, "", "store", "check", "--store", filepath.Join(a, "store"))
	if code != exitFailed || !strings.Contains(out, `{"problem":"file `+hash) {
		t.Fatalf("store check of a damaged file: exit %d\n%s%s", code, out, errs)
	}

	if _, c := nodeCLI(t, "", "init", "--dir", r, "--account-key", filepath.Join(a, "account.key")); c != 0 {
		t.Fatal("init r")
	}
	mustRun(t, "restore", "--from", backup, "--dir", r)
	mustRun(t, "store", "check", "--store", filepath.Join(r, "store"))
	if out, c := nodeCLI(t, "", "file", "get", sp, hash, "--dir", r); c != 0 || out != string(data) {
		t.Fatalf("file get on the restored node: exit %d, %d bytes, want the %d attached", c, len(out), len(data))
	}

	// Damage the files index behind the engine's back: the version's
	// entry naming the file goes ('n' file ‖ space ‖ version).
	kv, err := pebble.Open(filepath.Join(r, "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := canonical.ParseID(hash)
	p := append([]byte{'n'}, d[:]...)
	it, err := kv.NewIter(p, append(bytes.Clone(p), 0xff))
	if err != nil {
		t.Fatal(err)
	}
	var named [][]byte
	for it.Next() {
		named = append(named, bytes.Clone(it.Key()))
	}
	it.Close()
	bt, _ := kv.NewBatch()
	for _, k := range named {
		bt.Delete(k)
	}
	if err := bt.Commit(engine.Sync); err != nil || len(named) != 1 {
		t.Fatalf("damaging the files index: %d entries for the file, %v", len(named), err)
	}
	bt.Close()
	kv.Close()
	out, errs, code = minca(t, "", "store", "check", "--store", filepath.Join(r, "store"))
	if code != exitFailed || !strings.Contains(out, `{"problem":"files index: version `) || !strings.Contains(out, "names file "+hash) {
		t.Fatalf("store check of a damaged files index: exit %d\n%s%s", code, out, errs)
	}
}
