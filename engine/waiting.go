package engine

import (
	"encoding/binary"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// waiting is a version held aside as later (02 §9.5): the copy (whole if one
// came), who sent it, what Check learned, what it waits for, and its place
// in arrival order. arrived (Unix ms) and size (the bytes its entry takes)
// are kept beside it, under its source ('Q'), and decide who is dropped
// past the bounds (WaitingLimits).
type waiting struct {
	v       *record.Version
	from    string
	root    string
	waits   []string
	seq     uint64
	arrived int64
	size    int64
}

func (w *waiting) encode() ([]byte, error) {
	b := binary.AppendUvarint(nil, w.seq)
	b = appendString(b, w.from)
	b = appendString(b, w.root)
	b = binary.AppendUvarint(b, uint64(len(w.waits)))
	for _, s := range w.waits {
		b = appendString(b, s)
	}
	return canonical.Append(b, w.v.Object())
}

func decodeWaiting(b []byte) (waiting, error) {
	var w waiting
	bad := Errorf(ErrCorrupt, "damaged: waiting entry")
	w.size = int64(len(b))
	seq, n := binary.Uvarint(b)
	if n <= 0 {
		return w, bad
	}
	w.seq, b = seq, b[n:]
	var ok bool
	if w.from, b, ok = readString(b); !ok {
		return w, bad
	}
	if w.root, b, ok = readString(b); !ok {
		return w, bad
	}
	cnt, n := binary.Uvarint(b)
	if n <= 0 || cnt > uint64(len(b)) {
		return w, bad
	}
	b = b[n:]
	for range cnt {
		var s string
		if s, b, ok = readString(b); !ok {
			return w, bad
		}
		w.waits = append(w.waits, s)
	}
	v, err := record.Decode(b)
	if err != nil {
		return w, Errorf(ErrCorrupt, "damaged: waiting version: %v", err)
	}
	w.v = v
	return w, nil
}

// fromValue is a 'Q' entry's value: arrival (Unix ms), size, source.
func fromValue(arrived, size int64, from string) []byte {
	b := binary.AppendVarint(nil, arrived)
	b = binary.AppendUvarint(b, uint64(size))
	return append(b, from...)
}

func decodeFromValue(b []byte) (arrived, size int64, from string, err error) {
	arrived, n := binary.Varint(b)
	if n <= 0 {
		return 0, 0, "", Errorf(ErrCorrupt, "damaged: waiting source entry")
	}
	sz, m := binary.Uvarint(b[n:])
	if m <= 0 || sz > 1<<40 {
		return 0, 0, "", Errorf(ErrCorrupt, "damaged: waiting source entry")
	}
	return arrived, int64(sz), string(b[n+m:]), nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func readString(b []byte) (string, []byte, bool) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return "", nil, false
	}
	return string(b[n : n+int(l)]), b[n+int(l):], true
}

// waitingOf reads a waiting version, with its arrival and size.
func (t *tx) waitingOf(d canonical.ID) (waiting, bool, error) {
	b, ok, err := t.get(keys.WaitKey(d))
	if !ok || err != nil {
		return waiting{}, false, err
	}
	w, err := decodeWaiting(b)
	if err != nil {
		return w, false, err
	}
	fb, ok, err := t.get(keys.WaitFromKey(keys.SourceTag(w.from), w.seq, d))
	if err != nil {
		return w, false, err
	}
	if !ok {
		return w, false, Errorf(ErrCorrupt, "damaged: waiting version %s is not filed under its source", d)
	}
	if w.arrived, _, _, err = decodeFromValue(fb); err != nil {
		return w, false, err
	}
	return w, true, nil
}

// wait holds v aside. A new arrival takes the next place in arrival order;
// one re-judged keeps its place and arrival. Room is made first: past a
// bounded source's own bound its oldest are dropped; past the store-wide
// bound, the oldest of the bounded source holding the most; past
// MaxWaiting, the oldest of that source, or the oldest of all when no
// bounded source holds any. A version bigger than a bound alone is not
// held at all.
func (t *tx) wait(d canonical.ID, w waiting) error {
	fresh := w.seq == 0
	if fresh {
		// Dropping makes no new place: the next one is this one's.
		w.seq, w.arrived = t.st.waitSeq+1, t.now
	}
	val, err := w.encode()
	if err != nil {
		return err
	}
	w.size = int64(len(val))
	tag := keys.SourceTag(w.from)
	lim := &t.s.opts.Waiting
	if t.s.bounded(w.from) {
		if w.size > lim.MaxBytesPerSource || w.size > lim.MaxBytes {
			t.st.stats.WaitingDropped++
			return nil
		}
		for t.source(tag).bytes+w.size > lim.MaxBytesPerSource {
			if err := t.dropOldestOf(tag, false); err != nil {
				return err
			}
		}
		for t.st.waitBounded+w.size > lim.MaxBytes {
			victim, _ := t.largest()
			if err := t.dropOldestOf(victim, false); err != nil {
				return err
			}
		}
	}
	if fresh {
		for t.st.stats.Waiting >= int64(t.s.opts.MaxWaiting) {
			if victim, ok := t.largest(); ok {
				err = t.dropOldestOf(victim, false)
			} else {
				err = t.dropOldest()
			}
			if err != nil {
				return err
			}
		}
		t.st.waitSeq = w.seq
	}
	t.set(keys.WaitKey(d), val)
	for _, id := range w.waits {
		t.set(keys.WaitForKey(keys.Awaited(id), d), []byte{})
	}
	t.set(keys.WaitQueueKey(w.seq, d), []byte{})
	t.set(keys.WaitFromKey(tag, w.seq, d), fromValue(w.arrived, w.size, w.from))
	t.count(tag, w.from, w.size, w.arrived, 1)
	return nil
}

// count adds n waiting versions of size bytes (n is 1 or −1) to source
// tag and to the counters.
func (t *tx) count(tag [32]byte, from string, size, arrived int64, n int64) {
	src := t.source(tag)
	if src.count == 0 {
		src = source{from: from, bounded: t.s.bounded(from), oldest: arrived}
	}
	src.count += n
	src.bytes += n * size
	if n > 0 && arrived < src.oldest {
		src.oldest = arrived
	}
	t.setSource(tag, src)
	t.st.stats.Waiting += n
	t.st.stats.WaitingBytes += n * size
	if src.bounded {
		t.st.waitBounded += n * size
	}
}

// rewriteWaiting keeps a whole copy of a waiting stub in its place: the
// bounds are applied to its new size.
func (t *tx) rewriteWaiting(d canonical.ID, old, w waiting) error {
	if err := t.unwait(d, old); err != nil {
		return err
	}
	return t.wait(d, w)
}

// unwait removes a waiting version and its index entries.
func (t *tx) unwait(d canonical.ID, w waiting) error {
	t.del(keys.WaitKey(d))
	for _, id := range w.waits {
		t.del(keys.WaitForKey(keys.Awaited(id), d))
	}
	tag := keys.SourceTag(w.from)
	t.del(keys.WaitQueueKey(w.seq, d))
	t.del(keys.WaitFromKey(tag, w.seq, d))
	t.count(tag, w.from, w.size, w.arrived, -1)
	return nil
}

// drop lets a waiting version go, as if it was never received: the
// inputs of this batch it came from end as later.
func (t *tx) drop(d canonical.ID, expired bool) error {
	w, ok, err := t.waitingOf(d)
	if err != nil {
		return err
	}
	if !ok {
		return Errorf(ErrCorrupt, "damaged: queued waiting version %s is missing", d)
	}
	for _, j := range t.pending[d] {
		t.outcome(j, Outcome{Verdict: Later})
	}
	delete(t.pending, d)
	if expired {
		t.st.stats.WaitingExpired++
	} else {
		t.st.stats.WaitingDropped++
	}
	t.dropped += w.size
	return t.unwait(d, w)
}

func (t *tx) dropOldest() error {
	ds, err := t.digests([]byte{keys.WaitQueue}, 1)
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		return Errorf(ErrCorrupt, "damaged: %d waiting counted but none queued", t.st.stats.Waiting)
	}
	return t.drop(ds[0], false)
}

// dropOldestOf drops the oldest waiting version of a source.
func (t *tx) dropOldestOf(tag [32]byte, expired bool) error {
	ds, err := t.digests(keys.WaitFromPrefix(tag), 1)
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		return Errorf(ErrCorrupt, "damaged: a source counted %d waiting versions, none filed", t.source(tag).count)
	}
	return t.drop(ds[0], expired)
}

// expire drops the waiting versions of bounded sources that arrived
// WaitingLimits.MaxAge ago or more.
func (t *tx) expire() error {
	age := t.s.opts.Waiting.MaxAge
	if age <= 0 || t.st.stats.Waiting == 0 {
		return nil
	}
	cutoff := t.now - age.Milliseconds()
	var due [][32]byte
	t.sources(func(tag [32]byte, s source) {
		if s.bounded && s.count > 0 && s.oldest <= cutoff {
			due = append(due, tag)
		}
	})
	for _, tag := range due {
		for t.source(tag).count > 0 {
			p := keys.WaitFromPrefix(tag)
			var arrived int64
			var ferr error
			err := t.scan(p, keys.PrefixEnd(p), func(_, v []byte) bool {
				arrived, _, _, ferr = decodeFromValue(v)
				return false
			})
			if err != nil {
				return err
			}
			if ferr != nil {
				return ferr
			}
			if arrived > cutoff {
				src := t.source(tag)
				src.oldest = arrived
				t.setSource(tag, src)
				break
			}
			if err := t.dropOldestOf(tag, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// trim drops what is past the bounds (at Open: the bounds may have been
// lowered since the versions were held).
func (t *tx) trim() error {
	lim := &t.s.opts.Waiting
	var over [][32]byte
	t.sources(func(tag [32]byte, s source) {
		if s.bounded && s.bytes > lim.MaxBytesPerSource {
			over = append(over, tag)
		}
	})
	for _, tag := range over {
		for t.source(tag).bytes > lim.MaxBytesPerSource {
			if err := t.dropOldestOf(tag, false); err != nil {
				return err
			}
		}
	}
	for t.st.waitBounded > lim.MaxBytes {
		victim, _ := t.largest()
		if err := t.dropOldestOf(victim, false); err != nil {
			return err
		}
	}
	for t.st.stats.Waiting > int64(t.s.opts.MaxWaiting) {
		var err error
		if victim, ok := t.largest(); ok {
			err = t.dropOldestOf(victim, false)
		} else {
			err = t.dropOldest()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// waitersOf lists the versions waiting for d.
func (t *tx) waitersOf(d canonical.ID) ([]canonical.ID, error) {
	return t.digests(append([]byte{keys.WaitFor}, d[:]...), -1)
}

// Waiting lists the versions held aside as later, oldest first, with what
// each waits for.
func (s *Store) Waiting(yield func(v *record.Version, waits []string) bool) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	p := []byte{keys.WaitQueue}
	it, err := s.kv.NewIter(p, keys.PrefixEnd(p))
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		if err := s.check(); err != nil {
			return err // closing: Close waits for this read
		}
		k := it.Key()
		d, ok := keys.Digest(k, len(k)-32)
		if !ok {
			return Errorf(ErrCorrupt, "damaged: waiting queue key")
		}
		b, err := s.kv.Get(keys.WaitKey(d))
		if err != nil {
			return Errorf(ErrCorrupt, "damaged: queued waiting version %s: %v", d, err)
		}
		w, err := decodeWaiting(b)
		if err != nil {
			return err
		}
		if !yield(w.v, w.waits) {
			return nil
		}
	}
	return it.Err()
}

// WaitingSource is what one source (Admit's from) has waiting
// ([Store.WaitingSources]).
type WaitingSource struct {
	From     string `json:"from"`
	Versions int64  `json:"versions"`
	Bytes    int64  `json:"bytes"`
	// Bounded: the byte bounds and MaxAge apply to it (WaitingLimits).
	Bounded bool `json:"bounded"`
	// Oldest is when its oldest waiting version arrived, or earlier.
	Oldest time.Time `json:"oldest"`
}

// WaitingSources lists the sources with versions waiting, the most bytes
// first, at most n of them (all when n ≤ 0).
func (s *Store) WaitingSources(n int) ([]WaitingSource, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	s.state.Lock()
	out := make([]WaitingSource, 0, len(s.srcs))
	for _, src := range s.srcs {
		if src.count > 0 {
			out = append(out, WaitingSource{From: src.from, Versions: src.count, Bytes: src.bytes, Bounded: src.bounded,
				Oldest: time.UnixMilli(src.oldest).UTC()})
		}
	}
	s.state.Unlock()
	sortSources(out)
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out, nil
}
