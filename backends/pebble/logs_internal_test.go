package pebble

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// emptyLog keeps a log that holds a record, and cuts to nothing one that
// holds none of its own (bytes of a spent log, or zeroes).
func TestEmptyLog(t *testing.T) {
	dir := t.TempDir()
	var withRecord bytes.Buffer
	w := record.NewWriter(&withRecord)
	if _, err := w.WriteRecord([]byte("a batch")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	garbage := make([]byte, 100<<10)
	rand.NewChaCha8([32]byte{1}).Read(garbage)
	for _, c := range []struct {
		name    string
		content []byte
		kept    bool
	}{
		{"a record", withRecord.Bytes(), true},
		{"bytes of no record", garbage, false},
		{"zeroes", make([]byte, 64<<10), false},
		{"nothing", nil, true},
	} {
		path := filepath.Join(dir, "000009.log")
		if err := os.WriteFile(path, c.content, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := emptyLog(vfs.Default, path, 9); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if kept := bytes.Equal(got, c.content); kept != c.kept || (!kept && len(got) != 0) {
			t.Errorf("%s: %d bytes of %d left, want kept %v", c.name, len(got), len(c.content), c.kept)
		}
	}
}
