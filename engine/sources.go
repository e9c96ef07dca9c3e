package engine

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
)

// The waiting bounds' defaults (02 §9.5; docs/sync.md, Limits).
const (
	// DefaultMaxWaiting is Options.MaxWaiting's default: versions waiting,
	// from every source.
	DefaultMaxWaiting = 100_000
	// DefaultMaxWaitingBytes is WaitingLimits.MaxBytes's default: bytes
	// waiting from bounded sources, all of them together.
	DefaultMaxWaitingBytes = 32 << 20
	// DefaultMaxWaitingBytesPerSource is WaitingLimits.MaxBytesPerSource's
	// default: bytes waiting from one bounded source (a peer's key). Eight
	// versions of a peer's largest frame.
	DefaultMaxWaitingBytesPerSource = 8 << 20
	// DefaultMaxWaitingAge is WaitingLimits.MaxAge's default: how long a
	// bounded source's version waits before it is dropped.
	DefaultMaxWaitingAge = 24 * time.Hour
	// DefaultMaxDroppedWaitingBytes is WaitingLimits.MaxDroppedBytes's
	// default: twice a source's bound, so a flood reclaims once every
	// two bounds' worth of versions dropped.
	DefaultMaxDroppedWaitingBytes = 16 << 20
)

// WaitingLimits bounds, in bytes and in time, the versions held aside as
// later (02 §9.5) that came from bounded sources — a node's peers, any of
// which may send versions that can never stand. A version dropped is as
// if never received: it was never acknowledged as stored, and is asked for
// again by the next reconciliation with a peer that holds it.
//
// Each version's size is the bytes its waiting entry takes: the version as
// it travels and what it waits for. Room for a new one is made by dropping,
// oldest first, the waiting versions of its own source past
// MaxBytesPerSource, then those of the bounded source holding the most
// bytes past MaxBytes — a source flooding the store loses its own, never
// another's while it holds more. A version bigger than a bound is not held.
type WaitingLimits struct {
	// MaxBytes bounds the bytes waiting from every bounded source
	// together. Default DefaultMaxWaitingBytes (32 MiB).
	MaxBytes int64
	// MaxBytesPerSource bounds the bytes waiting from one bounded source.
	// Default DefaultMaxWaitingBytesPerSource (8 MiB).
	MaxBytesPerSource int64
	// MaxAge drops a bounded source's waiting version this long after it
	// arrived; checked at Open and, while the store admits, about every
	// MaxAge/64 (at least a second, at most a minute). Default
	// DefaultMaxWaitingAge (24 h).
	MaxAge time.Duration
	// MaxDroppedBytes bounds the bytes of waiting versions dropped (or
	// expired) that a store may still hold on disk. A KV keeps what a
	// delete removed until it rewrites the data around it — Pebble until
	// a compaction it schedules by its own measures, so a flood of
	// versions that never stand would take disk by compaction timing,
	// not by the bounds above. Once the bytes dropped since the last
	// reclaim reach MaxDroppedBytes, a KV that is a [Reclaimer] gives
	// their space back before the batch that crossed it is acknowledged.
	// Default DefaultMaxDroppedWaitingBytes (16 MiB).
	MaxDroppedBytes int64
	// Unbounded reports the sources (Admit's from) the byte bounds and
	// MaxAge do not apply to: those whose dropped versions would not come
	// again, such as a node's own writes, its mirrors and imports. Their
	// versions count towards MaxWaiting only. Default nil: every source is
	// bounded.
	Unbounded func(from string) bool
}

func (l WaitingLimits) withDefaults() WaitingLimits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxWaitingBytes
	}
	if l.MaxBytesPerSource <= 0 {
		l.MaxBytesPerSource = DefaultMaxWaitingBytesPerSource
	}
	if l.MaxAge <= 0 {
		l.MaxAge = DefaultMaxWaitingAge
	}
	if l.MaxDroppedBytes <= 0 {
		l.MaxDroppedBytes = DefaultMaxDroppedWaitingBytes
	}
	return l
}

// sweepEvery is how often admission looks for waiting versions past
// MaxAge.
func (l WaitingLimits) sweepEvery() time.Duration {
	return min(max(l.MaxAge/64, time.Second), time.Minute)
}

// source is what one source has waiting.
type source struct {
	from         string
	bounded      bool
	count, bytes int64
	// oldest is when its oldest waiting version arrived (Unix ms), or
	// earlier: it is not moved on when the oldest is taken in.
	oldest int64
}

func (s *Store) bounded(from string) bool {
	u := s.opts.Waiting.Unbounded
	return u == nil || !u(from)
}

// source returns a source's waiting as this batch sees it.
func (t *tx) source(tag [32]byte) source {
	if src, ok := t.srcs[tag]; ok {
		return src
	}
	if t.prev != nil {
		if src, ok := t.prev.srcs[tag]; ok {
			return src
		}
	}
	t.s.state.Lock()
	defer t.s.state.Unlock()
	return t.s.srcs[tag]
}

func (t *tx) setSource(tag [32]byte, src source) {
	if t.srcs == nil {
		t.srcs = make(map[[32]byte]source)
	}
	t.srcs[tag] = src
}

// sources calls fn for every source with versions waiting as this batch
// sees them.
func (t *tx) sources(fn func(tag [32]byte, src source)) {
	for tag, src := range t.srcs {
		if src.count > 0 {
			fn(tag, src)
		}
	}
	if t.prev != nil {
		for tag, src := range t.prev.srcs {
			if _, ok := t.srcs[tag]; !ok && src.count > 0 {
				fn(tag, src)
			}
		}
	}
	t.s.state.Lock()
	var rest [][32]byte
	var srcs []source
	for tag, src := range t.s.srcs {
		if _, ok := t.srcs[tag]; ok {
			continue
		}
		if t.prev != nil {
			if _, ok := t.prev.srcs[tag]; ok {
				continue
			}
		}
		rest, srcs = append(rest, tag), append(srcs, src)
	}
	t.s.state.Unlock()
	for i, tag := range rest {
		fn(tag, srcs[i])
	}
}

// largest is the bounded source with the most bytes waiting; ok false
// when no bounded source has any. Ties go to the one whose oldest is
// newest: the later flood, not the source that waited first.
func (t *tx) largest() (tag [32]byte, ok bool) {
	var best source
	t.sources(func(k [32]byte, src source) {
		if !src.bounded {
			return
		}
		if !ok || src.bytes > best.bytes || src.bytes == best.bytes && (src.oldest > best.oldest ||
			src.oldest == best.oldest && bytes.Compare(k[:], tag[:]) < 0) {
			tag, best, ok = k, src, true
		}
	})
	return tag, ok
}

// publishSources makes a committed batch's sources the store's; state is
// held.
func (s *Store) publishSources(t *tx) {
	for tag, src := range t.srcs {
		if src.count <= 0 {
			delete(s.srcs, tag)
			continue
		}
		if s.srcs == nil {
			s.srcs = make(map[[32]byte]source)
		}
		s.srcs[tag] = src
	}
}

// loadSources reads what each source has waiting ('Q'), once at Open.
func (s *Store) loadSources() error {
	s.srcs = make(map[[32]byte]source)
	s.st.waitBounded = 0
	if s.st.stats.Waiting == 0 {
		return nil
	}
	p := []byte{keys.WaitFrom}
	it, err := s.kv.NewIter(p, keys.PrefixEnd(p))
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		k := it.Key()
		if len(k) != 1+32+8+32 {
			return Errorf(ErrCorrupt, "damaged: waiting source key %x", k)
		}
		var tag [32]byte
		copy(tag[:], k[1:33])
		arrived, size, from, err := decodeFromValue(it.Value())
		if err != nil {
			return err
		}
		s.addSource(tag, from, size, arrived)
	}
	return it.Err()
}

// addSource counts a waiting version to its source, at Open.
func (s *Store) addSource(tag [32]byte, from string, size, arrived int64) {
	src, ok := s.srcs[tag]
	if !ok {
		src = source{from: from, bounded: s.bounded(from), oldest: arrived}
	}
	src.count++
	src.bytes += size
	src.oldest = min(src.oldest, arrived)
	s.srcs[tag] = src
	if src.bounded {
		s.st.waitBounded += size
	}
}

// upgradeWaiting brings the waiting versions of a layout 6 store to this
// layout, in b: each is filed under its source, as arrived now.
func (s *Store) upgradeWaiting(b Batch) error {
	s.srcs = make(map[[32]byte]source)
	now := s.now().UnixMilli()
	p := []byte{keys.WaitQueue}
	it, err := s.kv.NewIter(p, keys.PrefixEnd(p))
	if err != nil {
		return err
	}
	var total int64
	for it.Next() {
		k := it.Key()
		d, ok := keys.Digest(k, len(k)-32)
		if !ok {
			it.Close()
			return Errorf(ErrCorrupt, "damaged: waiting queue key")
		}
		val, err := s.kv.Get(keys.WaitKey(d))
		if err == nil {
			var w waiting
			if w, err = decodeWaiting(val); err == nil {
				tag := keys.SourceTag(w.from)
				err = b.Set(keys.WaitFromKey(tag, w.seq, d), fromValue(now, w.size, w.from))
				s.addSource(tag, w.from, w.size, now)
				total += w.size
			}
		}
		if err != nil {
			it.Close()
			return fmt.Errorf("minca/engine: upgrading waiting version %s: %w", d, err)
		}
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		return err
	}
	s.st.stats.WaitingBytes = total
	return nil
}

// discard is the batch of a store open read-only: an upgrade writes
// nothing there.
type discard struct{}

func (discard) Set(key, value []byte) error { return nil }
func (discard) Delete(key []byte) error     { return nil }
func (discard) Commit(Durability) error     { return nil }
func (discard) Close() error                { return nil }

// tidyWaiting drops, at Open, the waiting versions past MaxAge or past
// the bounds, in one synced batch when there are any. A store open
// read-only is left as it is.
func (s *Store) tidyWaiting() error {
	if s.st.stats.Waiting == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.begin(nil, 0)
	before := t.st.stats
	if err := t.expire(); err != nil {
		return err
	}
	if err := t.trim(); err != nil {
		return err
	}
	if t.st.stats == before {
		return nil
	}
	if err := s.commit(t); err != nil && !errors.Is(err, ErrReadOnly) {
		return fmt.Errorf("minca/engine: dropping expired waiting versions: %w", err)
	}
	s.lastSweep = time.UnixMilli(t.now)
	return nil
}

// sweepDue reports whether a batch should look for expired waiting
// versions; Store.mu is held.
func (s *Store) sweepDue(now int64) bool {
	if now-s.lastSweep.UnixMilli() < s.opts.Waiting.sweepEvery().Milliseconds() {
		return false
	}
	s.lastSweep = time.UnixMilli(now)
	return true
}

func sortSources(ss []WaitingSource) {
	slices.SortFunc(ss, func(a, b WaitingSource) int {
		if a.Bytes != b.Bytes {
			if a.Bytes > b.Bytes {
				return -1
			}
			return 1
		}
		return strings.Compare(a.From, b.From)
	})
}

// checkWaitingSource checks a waiting version's source entry: filed under
// its source and sequence, with its size.
func (c *checker) checkWaitingSource(d canonical.ID, w waiting) error {
	b, err := c.s.kv.Get(keys.WaitFromKey(keys.SourceTag(w.from), w.seq, d))
	if errors.Is(err, ErrNotFound) {
		c.add("waiting %s: not filed under its source %q", d, w.from)
		return nil
	}
	if err != nil {
		return err
	}
	_, size, from, err := decodeFromValue(b)
	switch {
	case err != nil:
		c.add("waiting %s: %v", d, err)
	case size != w.size || from != w.from:
		c.add("waiting %s: filed as %d bytes from %q, is %d bytes from %q", d, size, from, w.size, w.from)
	}
	c.stats.WaitingBytes += w.size
	return nil
}
