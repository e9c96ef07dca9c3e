package pebble

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/engine"
)

// L0 is compacted by the bytes of memtables it holds, not by a count of
// sublevels: smaller memtables (less memory) wait for more of them, so the
// level below is rewritten no more often.
func TestL0Thresholds(t *testing.T) {
	for _, c := range []struct {
		memTable      uint64
		compact, stop int
	}{
		{16 << 20, 8, 12}, // the default: as before
		{8 << 20, 16, 20},
		{1 << 20, 32, 36}, // at most 32
		{64 << 20, 4, 12}, // at least 4, and Pebble's 12 to stop writes
	} {
		if compact, stop := l0Thresholds(c.memTable); compact != c.compact || stop != c.stop {
			t.Errorf("memtables of %d bytes: compact at %d, stop at %d sublevels; want %d, %d", c.memTable, compact, stop, c.compact, c.stop)
		}
	}
}

// With 1 MiB memtables, twelve flushes wait in L0 (Pebble compacts at
// half the threshold, 16 sublevels of 1 MiB): no compaction has rewritten
// anything. At a fixed 8 the fourth flush started one.
func TestSmallMemtablesWaitInL0(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), &Options{CacheSize: 1 << 20, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	val := make([]byte, 1000)
	for f := range 12 {
		b, _ := s.NewBatch()
		for i := range 500 {
			// Every flush spans the whole key space, as an import's do.
			if err := b.Set(binary.BigEndian.AppendUint32([]byte{'k'}, uint32(i*1000+f)), val); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(engine.NoSync); err != nil {
			t.Fatal(err)
		}
		b.Close()
		if err := s.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	m := s.db.Metrics()
	if m.Compact.Count != 0 || m.Levels[0].Sublevels < 12 {
		t.Fatalf("after 12 flushes of 1 MiB memtables: %d compactions, %d L0 sublevels; want none and 12\n%s", m.Compact.Count, m.Levels[0].Sublevels, m)
	}
}
