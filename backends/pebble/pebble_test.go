package pebble_test

import (
	"path/filepath"
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
