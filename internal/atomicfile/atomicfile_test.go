package atomicfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/internal/atomicfile"
)

// A write replaces the file whole, with its mode, and leaves nothing
// else behind; a write into a directory that is not there fails and
// leaves the old file as it was.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	for _, data := range []string{`{"a":1}`, `{"b":2}`} {
		if err := atomicfile.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != data {
			t.Fatalf("%q %v", b, err)
		}
	}
	info, err := os.Stat(p)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", info.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "nope", "f"), []byte("x"), 0o600); err == nil {
		t.Fatal("a write into a missing directory went")
	}
	if b, _ := os.ReadFile(p); string(b) != `{"b":2}` {
		t.Fatalf("%q", b)
	}
}

// Create writes a new file whole, and refuses to replace one: the file
// there keeps its bytes and nothing else is left behind.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "k.pem")
	if err := atomicfile.Create(p, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.Create(p, []byte("second"), 0o600)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a second Create: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "first" {
		t.Fatalf("%q", b)
	}
	if info, err := os.Stat(p); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", info.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}
