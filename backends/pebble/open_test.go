package pebble_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/internal/localtest"
	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/backends/pebble/pebbletest"
	"github.com/minca-go/minca/engine"
)

// A store that must exist and does not is ErrNoStore, "no store at PATH",
// and nothing is created: not the directory, not a lock file, not a
// store in an empty directory.
func TestMustExist(t *testing.T) {
	for _, o := range []pebble.Options{{MustExist: true}, {ReadOnly: true}} {
		missing := filepath.Join(t.TempDir(), "dbb")
		_, err := pebble.Open(missing, &o)
		if !errors.Is(err, engine.ErrNoStore) || err.Error() != "no store at "+missing {
			t.Fatalf("%+v: %v", o, err)
		}
		if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%+v: the directory was created: %v", o, err)
		}
		empty := t.TempDir()
		if _, err := pebble.Open(empty, &o); !errors.Is(err, engine.ErrNoStore) {
			t.Fatalf("%+v, an empty directory: %v", o, err)
		}
		if es, _ := os.ReadDir(empty); len(es) != 0 {
			t.Fatalf("%+v: %d files created in an empty directory", o, len(es))
		}
	}
	dir := filepath.Join(t.TempDir(), "db")
	pebbletest.Fill(t, dir, false)
	s, err := pebble.Open(dir, &pebble.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// A store opened read-only reads everything and writes nothing: on a
// write-protected directory (or, as root, where that stops nothing, with
// no file created or changed), with what is still in the log (replayed in
// memory) and with everything in tables.
func TestReadOnly(t *testing.T) {
	for _, compact := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "db")
		vs := pebbletest.Fill(t, dir, compact)
		localtest.WriteProtect(t, dir)
		before := localtest.List(t, dir)
		kv, err := pebble.Open(dir, &pebble.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		localtest.ReadBack(t, kv, vs)
		before.Same(t, localtest.List(t, dir))
	}
}

// Readers share the store; a writer is kept out while one reads, and a
// reader while one writes.
func TestReadOnlyLocks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	pebbletest.Fill(t, dir, false)
	ro := &pebble.Options{ReadOnly: true}
	r1, err := pebble.Open(dir, ro)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := pebble.Open(dir, ro)
	if err != nil {
		t.Fatal("a second reader:", err)
	}
	if _, err := pebble.Open(dir, nil); !errors.Is(err, engine.ErrLocked) {
		t.Fatalf("a writer beside readers: %v", err)
	}
	r1.Close()
	r2.Close()
	w, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := pebble.Open(dir, ro); !errors.Is(err, engine.ErrLocked) {
		t.Fatalf("a reader beside a writer: %v", err)
	}
}

// A store owned by another user, in a directory this one cannot write: run
// as user nobody (the tests run as root; as another user TestReadOnly's
// write-protected directory is the same case), a read-only open reads it
// all and writes nothing. The test run as nobody is this test itself.
func TestReadOnlyAnotherUser(t *testing.T) {
	if dir := localtest.OtherUserStore(); dir != "" {
		kv, err := pebble.Open(dir, &pebble.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(localtest.Summary(localtest.ReadAll(t, kv)))
		return
	}
	dir, bin, ok := localtest.OtherUserDir(t)
	if !ok {
		t.Skip("only root runs a process as another user; TestReadOnly covers this user")
	}
	for _, compact := range []bool{false, true} {
		vs := pebbletest.Fill(t, dir, compact)
		before := localtest.List(t, dir)
		out := localtest.ReadAsOtherUser(t, bin, "TestReadOnlyAnotherUser", dir)
		if want := localtest.Summary(localtest.IDs(vs)); !strings.Contains(out, want) {
			t.Fatalf("read as nobody:\n%s\nwant %s", out, want)
		}
		before.Same(t, localtest.List(t, dir))
		os.RemoveAll(dir)
	}
}
