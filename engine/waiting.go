package engine

import (
	"encoding/binary"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// waiting is a version held aside as later (02 §9.5): the copy (whole if one
// came), who sent it, what Check learned, what it waits for, and its place
// in arrival order, which decides who is dropped past Options.MaxWaiting.
type waiting struct {
	v     *record.Version
	from  string
	root  string
	waits []string
	seq   uint64
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

func (t *tx) waitingOf(d canonical.ID) (waiting, bool, error) {
	b, ok, err := t.get(keys.WaitKey(d))
	if !ok || err != nil {
		return waiting{}, false, err
	}
	w, err := decodeWaiting(b)
	return w, err == nil, err
}

// wait holds v aside. A new arrival takes the next place in arrival order;
// one re-judged keeps its place. Past MaxWaiting the oldest are dropped.
func (t *tx) wait(d canonical.ID, w waiting) error {
	if w.seq == 0 {
		for t.st.stats.Waiting >= int64(t.s.opts.MaxWaiting) {
			if err := t.dropOldest(); err != nil {
				return err
			}
		}
		t.st.waitSeq++
		w.seq = t.st.waitSeq
	}
	val, err := w.encode()
	if err != nil {
		return err
	}
	t.set(keys.WaitKey(d), val)
	for _, id := range w.waits {
		t.set(keys.WaitForKey(keys.Awaited(id), d), []byte{})
	}
	t.st.stats.Waiting++
	t.set(keys.WaitQueueKey(w.seq, d), []byte{})
	return nil
}

func (t *tx) rewriteWaiting(d canonical.ID, w waiting) error {
	val, err := w.encode()
	if err != nil {
		return err
	}
	t.set(keys.WaitKey(d), val)
	return nil
}

// unwait removes a waiting version and its index entries.
func (t *tx) unwait(d canonical.ID, w waiting) error {
	t.del(keys.WaitKey(d))
	for _, id := range w.waits {
		t.del(keys.WaitForKey(keys.Awaited(id), d))
	}
	t.st.stats.Waiting--
	t.del(keys.WaitQueueKey(w.seq, d))
	return nil
}

func (t *tx) dropOldest() error {
	p := []byte{keys.WaitQueue}
	ds, err := t.digests(p, 1)
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		return Errorf(ErrCorrupt, "damaged: %d waiting counted but none queued", t.st.stats.Waiting)
	}
	w, ok, err := t.waitingOf(ds[0])
	if err != nil {
		return err
	}
	if !ok {
		return Errorf(ErrCorrupt, "damaged: queued waiting version %s is missing", ds[0])
	}
	for _, j := range t.pending[ds[0]] {
		t.outcome(j, Outcome{Verdict: Later})
	}
	delete(t.pending, ds[0])
	return t.unwait(ds[0], w)
}

// waitersOf lists the versions waiting for d.
func (t *tx) waitersOf(d canonical.ID) ([]canonical.ID, error) {
	return t.digests(append([]byte{keys.WaitFor}, d[:]...), -1)
}

// Waiting lists the versions held aside as later, oldest first, with what
// each waits for.
func (s *Store) Waiting(yield func(v *record.Version, waits []string) bool) error {
	if err := s.check(); err != nil {
		return err
	}
	p := []byte{keys.WaitQueue}
	it, err := s.kv.NewIter(p, keys.PrefixEnd(p))
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
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
