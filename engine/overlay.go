package engine

import (
	"bytes"
	"errors"
	"slices"
	"sort"

	"github.com/minca-go/minca/engine/internal/keys"
)

// A batch's reads go to what it wrote (kept here, in memory), then to
// what was read ahead for it, then to the store: the KV's batch only
// writes, and nothing read twice is read from the KV twice. A key written
// several times in one batch reaches the KV once, at commit.

// write is one key's pending write.
type write struct {
	val []byte
	del bool
	// fresh: the key was not in the store before this batch, so deleting
	// it again drops the write instead of writing a tombstone.
	fresh bool
}

// ahead is a value read ahead for the batch (ok false: not held).
type ahead struct {
	val []byte
	ok  bool
}

// ranged tells whether k is in a table the engine iterates inside a batch on hot
// paths (who waits for what, the waiting queue, by source, the versions naming a
// file); their written keys are
// kept sorted so iterating them does not scan every write.
func ranged(k []byte) bool {
	return len(k) > 0 && (k[0] == keys.WaitFor || k[0] == keys.WaitQueue || k[0] == keys.WaitFrom || k[0] == keys.FileNamed)
}

// get reads a key as this batch sees it.
func (t *tx) get(k []byte) ([]byte, bool, error) {
	if w, ok := t.w[string(k)]; ok {
		return w.val, !w.del, nil
	}
	if t.prev != nil {
		if w, ok := t.prev.w[string(k)]; ok {
			return w.val, !w.del, nil
		}
	}
	if a, ok := t.ahead[string(k)]; ok {
		return a.val, a.ok, nil
	}
	v, err := t.s.kv.Get(k)
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// note records a write of k, its bytes kept in the batch's key arena
// (keyarena.go).
func (t *tx) note(k []byte, w write) {
	ks := t.ka.own(k)
	if t.fill != nil && told(ks) {
		t.fill.add(ks) // before the batch is decided: filling.go
	}
	if old, ok := t.w[ks]; ok {
		w.fresh = w.fresh || old.fresh
	} else if ranged(k) {
		i, _ := slices.BinarySearch(t.sorted, ks)
		t.sorted = slices.Insert(t.sorted, i, ks)
	}
	t.w[ks] = w
}

// set writes a key.
func (t *tx) set(k, v []byte) { t.note(k, write{val: v}) }

// setFresh writes a key known not to be in the store before this batch
// (a version's own keys, when it was not held).
func (t *tx) setFresh(k, v []byte) { t.note(k, write{val: v, fresh: true}) }

// key is an empty slice at the tail of the batch's key arena, for a key
// to be built in (a keys.Append… form): given to set, setFresh or del, it
// is kept without a copy; given to get, it is read and left, valid until
// the next key is built.
func (t *tx) key() []byte { return t.ka.tail() }

// del deletes a key.
func (t *tx) del(k []byte) {
	if old, ok := t.w[string(k)]; ok && old.fresh {
		delete(t.w, string(k))
		if ranged(k) {
			if i, ok := slices.BinarySearch(t.sorted, string(k)); ok {
				t.sorted = slices.Delete(t.sorted, i, i+1)
			}
		}
		return
	}
	t.note(k, write{del: true})
}

// readAhead reads the given keys from the store in one sorted pass, for
// the gets that follow. ks are aheadKeys', never changed after.
func (t *tx) readAhead(ks [][]byte) error {
	slices.SortFunc(ks, bytes.Compare)
	ks = slices.CompactFunc(ks, bytes.Equal)
	if len(ks) == 0 {
		return nil
	}
	if t.ahead == nil { // made here: Submit may give it what was read beside
		t.ahead = make(map[string]ahead, len(ks))
	}
	found := make([]bool, len(ks))
	if err := t.s.kv.GetMany(ks, func(i int, v []byte) {
		found[i] = true
		t.ahead[frozen(ks[i])] = aheadOf(v)
	}); err != nil {
		return err
	}
	for i, k := range ks {
		if !found[i] {
			t.ahead[frozen(k)] = aheadMissing
		}
	}
	return nil
}

// aheadOf is a value read ahead: a copy (the KV's is valid only during
// the call).
func aheadOf(v []byte) ahead { return ahead{val: bytes.Clone(v), ok: true} }

// aheadMissing is a key read ahead and not held.
var aheadMissing = ahead{}

// written lists the keys in [lower, upper) that t wrote, ascending.
func (t *tx) written(lower, upper []byte) []string {
	var out []string
	if ranged(lower) && len(upper) > 0 && (upper[0] == lower[0] || len(upper) == 1 && upper[0] == lower[0]+1) {
		i := sort.SearchStrings(t.sorted, string(lower))
		for ; i < len(t.sorted) && t.sorted[i] < string(upper); i++ {
			out = append(out, t.sorted[i])
		}
		return out
	}
	for k := range t.w {
		if k >= string(lower) && (upper == nil || k < string(upper)) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// pendingWrite returns the write of k by this batch or the one committing.
func (t *tx) pendingWrite(k string) write {
	if w, ok := t.w[k]; ok {
		return w
	}
	return t.prev.w[k]
}

// scan calls fn for each key in [lower, upper) as the batch will leave
// them, in ascending order; fn returns false to stop. k and v are valid
// only during the call.
func (t *tx) scan(lower, upper []byte, fn func(k, v []byte) bool) error {
	mine := t.written(lower, upper)
	if t.prev != nil {
		mine = append(mine, t.prev.written(lower, upper)...)
		slices.Sort(mine)
		mine = slices.Compact(mine)
	}
	it, err := t.s.kv.NewIter(lower, upper)
	if err != nil {
		return err
	}
	more := it.Next()
	for more || len(mine) > 0 {
		var c int
		switch {
		case !more:
			c = 1
		case len(mine) == 0:
			c = -1
		default:
			c = bytes.Compare(it.Key(), []byte(mine[0]))
		}
		if c < 0 { // the store's, not written in this batch
			if !fn(it.Key(), it.Value()) {
				return it.Close()
			}
			more = it.Next()
			continue
		}
		if c == 0 {
			more = it.Next()
		}
		w := t.pendingWrite(mine[0])
		k := mine[0]
		mine = mine[1:]
		if !w.del && !fn([]byte(k), w.val) {
			return it.Close()
		}
	}
	return errors.Join(it.Err(), it.Close())
}
