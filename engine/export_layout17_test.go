package engine

import (
	"bytes"
	"fmt"

	"github.com/minca-go/minca/engine/internal/keys"
)

// Layout17 turns kv into a store as layout 17 kept it (each record's
// history entries under its key, 'h' rec order vseq, its head naming no
// number, the counters no last number given), and marks it as layout
// `as` (17, or earlier after Layout16's change).
func Layout17(kv KV, as byte) error {
	b, err := kv.NewBatch()
	if err != nil {
		return err
	}
	defer b.Close()
	recs := map[uint64][]byte{}
	it, err := kv.NewIter([]byte{keys.History}, []byte{keys.History + 1})
	if err != nil {
		return err
	}
	for it.Next() {
		if !keys.IsHead(it.Key()) {
			continue
		}
		h, err := decodeHead(it.Value())
		if err != nil {
			return err
		}
		if h.num == 0 {
			continue
		}
		recs[h.num] = bytes.Clone(it.Key()[1:])
		h.num = 0
		if err := b.Set(bytes.Clone(it.Key()), h.encode()); err != nil {
			return err
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	if it, err = kv.NewIter([]byte{keys.HistNum}, []byte{keys.HistNum + 1}); err != nil {
		return err
	}
	for it.Next() {
		e, ok := keys.HistoryEntry(it.Key())
		if !ok || recs[e.Num] == nil {
			it.Close()
			return fmt.Errorf("history key %x", it.Key())
		}
		if err := b.Delete(bytes.Clone(it.Key())); err != nil {
			return err
		}
		if err := b.Set(keys.HistoryKey(recs[e.Num], e.Seq, e.Vseq), bytes.Clone(it.Value())); err != nil {
			return err
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	state, err := kv.Get(keys.InternalKey(stateName))
	if err != nil {
		return err
	}
	c, err := decodeCounters(state)
	if err != nil {
		return err
	}
	c.recs = 0
	st := c.encode()
	st = st[:len(st)-1] // layout 17 kept no last number: the one byte of 0
	st[0] = as
	if err := b.Set(keys.InternalKey(stateName), st); err != nil {
		return err
	}
	return b.Commit(Sync)
}

// HistNumForms counts the record heads naming a number and the history
// entries under one ('H').
func HistNumForms(kv KV) (heads, entries int, err error) {
	it, err := kv.NewIter([]byte{keys.History}, []byte{keys.History + 1})
	if err != nil {
		return 0, 0, err
	}
	for it.Next() {
		if !keys.IsHead(it.Key()) {
			continue
		}
		h, err := decodeHead(it.Value())
		if err != nil {
			it.Close()
			return 0, 0, err
		}
		if h.num != 0 {
			heads++
		}
	}
	if err := it.Close(); err != nil {
		return 0, 0, err
	}
	if it, err = kv.NewIter([]byte{keys.HistNum}, []byte{keys.HistNum + 1}); err != nil {
		return 0, 0, err
	}
	defer it.Close()
	for it.Next() {
		entries++
	}
	return heads, entries, it.Err()
}

// RecNum is the number the head of the record (space, key) names, 0 for
// none.
func RecNum(kv KV, space, key string) (uint64, error) {
	hb, err := kv.Get(keys.HeadKey(keys.Rec(space, key)))
	if err != nil {
		return 0, err
	}
	h, err := decodeHead(hb)
	return h.num, err
}

// SetRecNum writes the head of the record (space, key) naming num.
func SetRecNum(kv KV, space, key string, num uint64) error {
	k := keys.HeadKey(keys.Rec(space, key))
	hb, err := kv.Get(k)
	if err != nil {
		return err
	}
	h, err := decodeHead(hb)
	if err != nil {
		return err
	}
	h.num = num
	b, err := kv.NewBatch()
	if err != nil {
		return err
	}
	defer b.Close()
	if err := b.Set(k, h.encode()); err != nil {
		return err
	}
	return b.Commit(Sync)
}

// HistKey is the key of the history entry of the version of the record
// (space, key) at seq, held at vseq, where the store keeps it.
func HistKey(kv KV, space, key string, seq int64, vseq uint64) ([]byte, error) {
	num, err := RecNum(kv, space, key)
	if err != nil {
		return nil, err
	}
	return appendHistKey(nil, keys.Rec(space, key), num, seq, vseq), nil
}
