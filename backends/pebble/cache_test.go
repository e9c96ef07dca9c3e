package pebble

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/engine"
)

// The block cache keeps blocks while the memtables are full: Pebble
// reserves their memory inside the cache, and a cache sized for blocks
// alone held none once two memtables had grown to MemTableSize.
func TestBlockCacheBesideFullMemtables(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), &Options{CacheSize: 4 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	val := make([]byte, 1000)
	key := func(i int) []byte { return binary.BigEndian.AppendUint32([]byte{'k'}, uint32(i)) }
	const n = 40_000 // 40 MB: memtables grow to full size, and flush
	for i := 0; i < n; i += 1000 {
		b, _ := s.NewBatch()
		for j := i; j < i+1000; j++ {
			if err := b.Set(key(j), val); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(engine.NoSync); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	// Keys in sstables, read twice: the second pass hits the cache.
	before := s.db.Metrics().BlockCache
	for range 2 {
		for i := 0; i < 2000; i++ {
			if _, err := s.Get(key(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	m := s.db.Metrics()
	hits := m.BlockCache.Hits - before.Hits
	misses := m.BlockCache.Misses - before.Misses
	if m.MemTable.Count < 1 || m.BlockCache.Size == 0 || hits < 2*misses {
		t.Fatalf("block cache holds %d bytes after %d hits and %d misses (memtables: %d of %d bytes)",
			m.BlockCache.Size, hits, misses, m.MemTable.Count, m.MemTable.Size)
	}
}
