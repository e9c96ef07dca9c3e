package pebble_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

func TestSuite(t *testing.T) {
	enginetest.Run(t, func(t *testing.T) engine.KV {
		s, err := pebble.Open(filepath.Join(t.TempDir(), "db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, enginetest.Reopen(func(path string) (engine.KV, error) { return pebble.Open(path, nil) }))
}

// The suite again, the crash test among it (a child killed by SIGKILL
// while it admits; nothing acknowledged lost), on a store whose memory is
// far below the defaults: 256 KiB memtables flushed all through, and
// L0 compacted at its 32 sublevels.
func TestSuiteSmallMemory(t *testing.T) {
	o := &pebble.Options{CacheSize: 1 << 20, MemTableSize: 256 << 10}
	enginetest.Run(t, func(t *testing.T) engine.KV {
		s, err := pebble.Open(filepath.Join(t.TempDir(), "db"), o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, enginetest.Reopen(func(path string) (engine.KV, error) { return pebble.Open(path, o) }))
}

// A memtable below the least is refused before anything is created: a
// store opened with one is not reported damaged, and no directory is left.
func TestMemTableBelowTheLeastRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	_, err := pebble.Open(dir, &pebble.Options{MemTableSize: pebble.MinMemTable - 1})
	if err == nil || !strings.Contains(err.Error(), "less than the least") {
		t.Fatalf("Open with a %d-byte memtable: %v, want MemTableSize refused", pebble.MinMemTable-1, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the refused open left %s: %v", dir, err)
	}
	s, err := pebble.Open(dir, &pebble.Options{MemTableSize: pebble.MinMemTable})
	if err != nil {
		t.Fatalf("Open with the least memtable: %v", err)
	}
	s.Close()
}
