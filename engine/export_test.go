package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
)

// Layout is the key layout this engine writes.
const Layout = layout

// Layout6State turns the engine's counters as this layout keeps them into
// those of layout 6, for the test of the upgrade.
func Layout6State(b []byte) ([]byte, error) {
	c, err := decodeCounters(b)
	if err != nil {
		return nil, err
	}
	c.stats.WaitingBytes, c.stats.WaitingDropped, c.stats.WaitingExpired = 0, 0, 0
	c.recs = 0
	n := c.encode()
	n = n[:len(n)-1] // layout 6 kept no last record number: its one byte of 0
	// Layout 6 had no waiting bytes, dropped or expired: the three
	// varints (zero: one byte each) before the index's length.
	cut := len(n) - len(c.index) - uvarintLen(uint64(len(c.index))) - 3
	out := append([]byte{6}, n[1:cut]...)
	return append(out, n[cut+3:]...), nil
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// Layout10 turns kv into a store as layout 10 kept it — the value of each
// record's first standing version in 'v' as well as in the record's head —
// for the test that such a store reads, checks and grows as before.
func Layout10(kv KV) error {
	if err := Layout15(kv, 10); err != nil {
		return err
	}
	b, err := kv.NewBatch()
	if err != nil {
		return err
	}
	defer b.Close()
	err = EachInFamily(kv, keys.Version, func(k, v []byte) error {
		rec, marked := markedRec(v)
		if !marked {
			return nil
		}
		hb, err := kv.Get(keys.HeadKey(rec))
		if err != nil {
			return err
		}
		env, body, ok, err := fromHead(hb, binary.BigEndian.Uint64(k[1:]))
		if err != nil || !ok {
			return fmt.Errorf("value %x: %v", k, err)
		}
		return b.Set(bytes.Clone(k), versionValue(env, body))
	})
	if err != nil {
		return err
	}
	if err := b.Commit(Sync); err != nil {
		return err
	}
	return Layout11(kv, 10)
}

// Layout11 turns kv into a store as layout 11 kept it (each entry of the
// index by root naming its version by digest, not by vseq, and Layout12's
// change), and marks it
// as layout `as` (11, or 10 after Layout10's change).
func Layout11(kv KV, as byte) error {
	if err := Layout12(kv, as); err != nil {
		return err
	}
	return rewriteFamily(kv, keys.Root, as, func(b Batch, k, _ []byte) error {
		k = bytes.Clone(k)
		vseq, _, byVseq, ok := keys.RootEntry(k)
		if !ok {
			return fmt.Errorf("root index key %x", k)
		}
		if !byVseq {
			return nil
		}
		d, err := idAt(kv, vseq)
		if err != nil {
			return err
		}
		if err := b.Delete(k); err != nil {
			return err
		}
		return b.Set(append(k[:keys.RootPrefixLen:keys.RootPrefixLen], d[:]...), nil)
	})
}

// Layout12 turns kv into a store as layout 12 kept it (each place of a
// writer's line naming its versions by digest, not by vseq, and
// Layout13's change), and marks it
// as layout `as` (12, or earlier after Layout11's change).
func Layout12(kv KV, as byte) error {
	if err := Layout13(kv, as); err != nil {
		return err
	}
	return rewriteFamily(kv, keys.Line, as, func(b Batch, k, v []byte) error {
		vseqs, _, byVseq, ok := keys.ReadPlace(v)
		if !ok {
			return fmt.Errorf("line place %x", k)
		}
		if !byVseq {
			return nil
		}
		var ds []byte
		for _, vseq := range vseqs {
			d, err := idAt(kv, vseq)
			if err != nil {
				return err
			}
			ds = append(ds, d[:]...)
		}
		return b.Set(bytes.Clone(k), ds)
	})
}

// Layout13 turns kv into a store as layout 13 kept it (each change log
// entry naming its versions by digest, not by vseq), and marks it as
// layout `as` (13, or earlier after Layout12's change).
func Layout13(kv KV, as byte) error {
	if err := Layout14(kv, as); err != nil {
		return err
	}
	id := func(vseq uint64) (canonical.ID, error) { return idAt(kv, vseq) }
	return rewriteFamily(kv, keys.Change, as, func(b Batch, k, v []byte) error {
		k = bytes.Clone(k)
		_, cs, refs, err := readChanges(k, v)
		if err != nil {
			return err
		}
		if refs == nil {
			return nil
		}
		if err := idsByVseq(cs, refs, id); err != nil {
			return err
		}
		if err := b.Delete(k); err != nil {
			return err
		}
		k[len(k)-1] = changeFormat
		return b.Set(k, encodeChanges(cs, nil))
	})
}

// Layout14 turns kv into a store as layout 14 kept it (each history
// entry naming its version by its id's text, not by vseq), and marks it
// as layout `as` (14, or earlier after Layout13's change).
func Layout14(kv KV, as byte) error {
	if err := Layout15(kv, as); err != nil {
		return err
	}
	return rewriteFamily(kv, keys.History, as, func(b Batch, k, val []byte) error {
		k = bytes.Clone(k)
		if keys.IsHead(k) {
			return nil
		}
		e, ok := keys.HistoryEntry(k)
		if !ok {
			return fmt.Errorf("history key %x", k)
		}
		if !e.ByVseq {
			return nil
		}
		vb, err := kv.Get(keys.VersionKey(e.Vseq))
		if err != nil {
			return err
		}
		env, _, err := readValue(kv, e.Vseq, vb)
		if err != nil {
			return err
		}
		v, err := decodeHeld(env, nil)
		if err != nil {
			return err
		}
		if err := b.Delete(k); err != nil {
			return err
		}
		return b.Set(keys.HistoryIDKey(e.Rec, e.Seq, v.ID), bytes.Clone(val))
	})
}

// Layout15 turns kv into a store as layout 15 kept it (each record's
// first standing version's value in its head alone, not in 'c', its 'v' a
// marker naming the record, and Layout16's change), and marks it as layout
// `as` (15, or earlier after Layout14's change).
func Layout15(kv KV, as byte) error {
	if err := Layout16(kv, as); err != nil {
		return err
	}
	return rewriteFamily(kv, keys.History, as, func(b Batch, k, v []byte) error {
		if !keys.IsHead(k) {
			return nil
		}
		h, err := decodeHead(v)
		if err != nil {
			return err
		}
		if !h.hasFirst || h.inHead {
			return nil
		}
		vb, err := kv.Get(keys.CurrentKey(h.firstV))
		if err != nil {
			return err
		}
		if err := b.Delete(keys.CurrentKey(h.firstV)); err != nil {
			return err
		}
		env, body, err := splitVersion(vb)
		if err != nil {
			return err
		}
		// The head as layouts 11 to 15 wrote it: this layout's, less the
		// first's body length, then the first's envelope and body.
		hb := h.encode()
		hb = hb[:len(hb)-uvarintLen(uint64(h.firstH.bodyLen))]
		hb = binary.AppendUvarint(hb, uint64(len(env)))
		hb = append(hb, env...)
		if body == nil {
			hb = append(hb, 0)
		} else {
			hb = append(append(hb, 1), body...)
		}
		if err := b.Set(bytes.Clone(k), hb); err != nil {
			return err
		}
		return b.Set(keys.VersionKey(h.firstV), markerValue(k[1:]))
	})
}

// markerValue is the 'v' value of a record's first standing version as
// layouts 11 to 15 wrote it.
func markerValue(rec []byte) []byte {
	return append(append(make([]byte, 0, 1+len(rec)), 0), rec...)
}

// HeadForms counts the record heads holding their first standing
// version's value (layouts 11 to 15) and those naming it (this layout).
func HeadForms(kv KV) (holding, naming int, err error) {
	err = EachInFamily(kv, keys.History, func(k, v []byte) error {
		if !keys.IsHead(k) {
			return nil
		}
		h, err := decodeHead(v)
		switch {
		case err != nil:
			return err
		case !h.hasFirst:
		case h.inHead:
			holding++
		default:
			naming++
		}
		return nil
	})
	return holding, naming, err
}

// MarkedValues counts the version values that are markers naming their
// record (layouts 11 to 15), and those marking a value in 'c'.
func MarkedValues(kv KV) (markers, marks int, err error) {
	err = EachInFamily(kv, keys.Version, func(_, v []byte) error {
		if _, ok := markedRec(v); ok {
			markers++
		} else if inCurrent(v) {
			marks++
		}
		return nil
	})
	return markers, marks, err
}

// CurrentValues counts the values in 'c'.
func CurrentValues(kv KV) (int, error) {
	n := 0
	err := EachInFamily(kv, keys.Current, func(_, _ []byte) error { n++; return nil })
	return n, err
}

// HistoryForms counts the history entries naming their versions by id
// and by vseq (under their records' keys or numbers).
func HistoryForms(kv KV) (byID, byVseq int, err error) {
	_, byVseq, err = HistNumForms(kv)
	if err != nil {
		return 0, 0, err
	}
	err = EachInFamily(kv, keys.History, func(k, _ []byte) error {
		if keys.IsHead(k) {
			return nil
		}
		e, ok := keys.HistoryEntry(k)
		switch {
		case !ok:
			return fmt.Errorf("history key %x", k)
		case e.ByVseq:
			byVseq++
		default:
			byID++
		}
		return nil
	})
	return byID, byVseq, err
}

// ChangeForms counts the change log entries naming their versions by
// digest and by vseq.
func ChangeForms(kv KV) (byDigest, byVseq int, err error) {
	err = EachInFamily(kv, keys.Change, func(k, _ []byte) error {
		if k[len(k)-1] == changeByVseq && len(k) == 10 {
			byVseq++
		} else {
			byDigest++
		}
		return nil
	})
	return byDigest, byVseq, err
}

// HeldCache is how many versions the cache of recently stored ones holds, and
// their bytes as stored.
func HeldCache(s *Store) (n int, bytes int64) {
	s.state.Lock()
	defer s.state.Unlock()
	return s.cache.held()
}

// IsHeldCached reports whether the cache of recently stored versions
// holds d.
func IsHeldCached(s *Store, d canonical.ID) bool {
	_, ok := s.cached(d)
	return ok
}

// VseqOf is the vseq a held version's value is at.
func VseqOf(s *Store, d canonical.ID) (uint64, error) {
	b, err := s.kv.Get(keys.IDKey(d))
	if err != nil {
		return 0, err
	}
	return decodeVseq(b)
}

// SubscriptionBytes bounds the versions a subscription holds untaken.
const SubscriptionBytes = subscriptionBytes

// commitAtLayout marks kv's store as written in layout as, in b with the
// rewrite that made it so, and commits b.
func commitAtLayout(kv KV, b Batch, as byte) error {
	state, err := kv.Get([]byte("_state"))
	if err != nil {
		return err
	}
	if err := b.Set([]byte("_state"), append([]byte{as}, state[1:]...)); err != nil {
		return err
	}
	return b.Commit(Sync)
}

// EachInFamily calls f with each key and value of a key family (the keys
// whose first byte is family) in kv, in order, until f fails; k and v are
// kv's, valid during the call only. The layout tests count and rewrite a
// family's entries with it.
func EachInFamily(kv KV, family byte, f func(k, v []byte) error) error {
	it, err := kv.NewIter([]byte{family}, []byte{family + 1})
	if err != nil {
		return err
	}
	for it.Next() {
		if err := f(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Err(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

// rewriteFamily rewrites a family's entries in one batch, f setting and
// deleting in b, and marks the store as written in layout as.
func rewriteFamily(kv KV, family, as byte, f func(b Batch, k, v []byte) error) error {
	b, err := kv.NewBatch()
	if err != nil {
		return err
	}
	defer b.Close()
	if err := EachInFamily(kv, family, func(k, v []byte) error { return f(b, k, v) }); err != nil {
		return err
	}
	return commitAtLayout(kv, b, as)
}

// idAt is the digest of the version held at vseq.
func idAt(kv KV, vseq uint64) (canonical.ID, error) {
	vb, err := kv.Get(keys.VersionKey(vseq))
	if err != nil {
		return canonical.ID{}, err
	}
	env, _, err := readValue(kv, vseq, vb)
	if err != nil {
		return canonical.ID{}, err
	}
	v, err := decodeHeld(env, nil)
	if err != nil {
		return canonical.ID{}, err
	}
	d, _ := keys.ParseExact(v.ID)
	return d, nil
}

// ReadAheadKept reports whether what ReadAhead read for p is still kept:
// not taken by p's decision (a commit came between).
func ReadAheadKept(p *Prepared) bool { return p.ahead != nil }

// OnCloseWaiting sets what Close calls when it starts waiting for the
// calls in progress.
func OnCloseWaiting(s *Store, f func()) { s.calls.waiting = f }

// Filled reports whether the store knows of a space a Filling fills
// (filling.go).
func Filled(s *Store) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fill != nil
}
