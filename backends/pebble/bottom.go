package pebble

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// bottomCoding is the compression the bottom level is written with (Open).
var bottomCoding = sstable.ZstdCompression

// markStrays makes the next compaction into the bottom level rewrite each
// table there that is coded otherwise than the bottom level is. Pebble
// moves a table down a level unchanged when nothing below overlaps it, and
// the engine's versions (`v`) are keyed in arrival order: at a million
// versions, their newest tables passed from the level above (Snappy, 16
// KiB blocks) into the bottom one as they were, and a third of the bottom
// level's bytes stayed in Snappy: 178 bytes a version in `v` against 138
// at 100,000 versions, where no level above the bottom forms
// (bench/REPORT-engine.md). A compaction rewrites
// only the tables its inputs overlap, so each such table gets an input
// over its first key: a range key deletion (range keys are a key space of
// their own, which no reader of the store asks for, so it deletes
// nothing), dropped when it reaches the bottom level.
func (s *Store) markStrays() (int, error) {
	levels, err := s.db.SSTables(pebble.WithProperties())
	if err != nil || len(levels) == 0 {
		return 0, err
	}
	var b *pebble.Batch
	n := 0
	for _, t := range levels[len(levels)-1] {
		if t.Properties == nil || t.Properties.CompressionName == bottomCoding.Name {
			continue
		}
		if b == nil {
			b = s.db.NewBatch()
			defer b.Close()
		}
		k := t.Smallest.UserKey
		if err := b.RangeKeyDelete(k, append(k[:len(k):len(k)], 0), nil); err != nil {
			return 0, err
		}
		n++
	}
	if b == nil {
		return 0, nil
	}
	return n, b.Commit(pebble.NoSync)
}
