package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
)

// VersionsStored is [Store.VersionJSON] for many versions at once, as a
// peer's WANT asks (02 §9; [Store.VersionsJSON] is the same in the order
// asked): it calls found with each held one's index in ids and its canonical JSON
// (a repeat again), in the order the store keeps the versions ('v',
// arrival order) rather than the order asked; what is not held is
// skipped. It looks all of ids up in one sorted pass over the id entries,
// then reads the values in vseq order, which for a peer catching up is
// near-sequential (runs of them read by stepping through their span), a
// group at a time: each group holds at most about budget bytes of values
// (and always one version), read and handed to found before the next is
// read, and no read is open while found runs. raw is valid only during
// the call (the group's versions lie in one buffer, used again for the
// next group): a caller that keeps it copies it.
func (s *Store) VersionsStored(ctx context.Context, ids []canonical.ID, budget int, found func(i int, raw []byte) error) error {
	return s.VersionsStoredAt(ctx, ids, nil, budget, found)
}

// VersionsStoredAt is [Store.VersionsStored] told where some of ids are
// held: at[i], when not 0, is the vseq this store's [Store.SyncOrder]
// gave ids[i] ([SyncItem.Vseq]), and such an id is read there with no
// look-up in 'e' (a peer's WANT asks mostly for versions it was just
// listed). at is nil or as long as ids. A vseq names one version for
// good (a version is stored once, at the next vseq, and never moves), so
// one the sync order gave stays true; one from elsewhere would read
// another version.
func (s *Store) VersionsStoredAt(ctx context.Context, ids []canonical.ID, at []uint64, budget int, found func(i int, raw []byte) error) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if len(ids) == 0 {
		return nil
	}
	if at != nil && len(at) != len(ids) {
		return fmt.Errorf("minca/engine: VersionsStoredAt: %d places for %d ids", len(at), len(ids))
	}
	hs, err := s.vseqsOf(ids, at)
	if err != nil {
		return err
	}
	if err := s.stop(ctx); err != nil {
		return err
	}
	g, _ := s.groups.Get().(*storedGroup)
	if g == nil {
		g = &storedGroup{s: s}
	}
	defer g.release()
	for j := 0; j < len(hs); {
		n, err := g.read(ids, hs[j:], budget)
		if err != nil {
			return err
		}
		for _, h := range hs[j : j+n] {
			if err := found(h.i, g.raws[h.k]); err != nil {
				return err
			}
		}
		j += n
		if err := s.stop(ctx); err != nil {
			return err
		}
	}
	return nil
}

// heldAt is an asked id's index in ids and the vseq its value is at; k is
// its value's place in the group being read.
type heldAt struct {
	vseq uint64
	i, k int
}

// vseqsOf looks ids up in one sorted pass over their entries ('e') and
// returns those held, in vseq order (repeats of an id by index); an id
// whose vseq at gives is not looked up.
func (s *Store) vseqsOf(ids []canonical.ID, at []uint64) ([]heldAt, error) {
	hs := make([]heldAt, 0, len(ids))
	byID := make([]int, 0, len(ids))
	for i := range ids {
		if at != nil && at[i] != 0 {
			hs = append(hs, heldAt{vseq: at[i], i: i})
		} else {
			byID = append(byID, i)
		}
	}
	slices.SortStableFunc(byID, func(a, b int) int { return bytes.Compare(ids[a][:], ids[b][:]) })
	idKeys := make([][]byte, 0, len(ids))
	first := make([]int, 0, len(ids)) // the place in byID of each key's first id
	for j, i := range byID {
		if j > 0 && ids[byID[j-1]] == ids[i] {
			continue
		}
		idKeys = append(idKeys, keys.IDKey(ids[i]))
		first = append(first, j)
	}
	var derr error
	err := s.kv.GetMany(idKeys, func(k int, val []byte) {
		vseq, err := decodeVseq(val)
		if err != nil {
			derr = cmp.Or(derr, err)
			return
		}
		for j := first[k]; j < len(byID) && ids[byID[j]] == ids[byID[first[k]]]; j++ {
			hs = append(hs, heldAt{vseq: vseq, i: byID[j]})
		}
	})
	if err = cmp.Or(err, derr); err != nil {
		return nil, err
	}
	slices.SortFunc(hs, func(a, b heldAt) int { return cmp.Or(cmp.Compare(a.vseq, b.vseq), cmp.Compare(a.i, b.i)) })
	return hs, nil
}

// storedGroup reads the values of a group of held versions; its buffers
// are used again group after group.
type storedGroup struct {
	s     *Store
	vKeys [][]byte // the values' keys read by seeks
	vAt   []int    // the place in vseqs of each of vKeys
	vseqs []uint64
	spans []heldSpan
	buf   []byte // the group's versions' JSON, side by side
	raws  [][]byte
	heads []groupHead
	cur   []int    // the group's values in 'c' (k, in vseq order)
	cKeys [][]byte // their keys
}

// release gives g back to its store's pool, its buffers kept unless one
// grew past storedKeep (a group of large versions).
func (g *storedGroup) release() {
	clear(g.raws)
	clear(g.heads)
	if cap(g.buf) > storedKeep {
		g.buf = nil
	}
	g.s.groups.Put(g)
}

// storedKeep is the largest buffer a reader keeps for the next: a group
// holds about budget bytes, a WANT's answer 256 KiB.
const storedKeep = 1 << 20

// heldSpan is where a value's version lies in the group's buf; end 0
// while not read.
type heldSpan struct{ off, end int }

// groupHead is a value of the group its record's head holds.
type groupHead struct {
	k  int
	vb []byte // the marker, 0 ‖ rec; nil once read
}

// storedGroupMax is the most values a group reads at once.
const storedGroupMax = 256

// A run of asked values whose vseqs lie at most stepGap apart, and at
// least stepRun of them, is read with one iterator stepping through its
// span, passing over the values not asked, rather than a seek a value: a
// peer catching up asks for versions stored mostly side by side (sync
// order, by creation time, is near the order they arrived in), and a step
// within a block costs a small part of a seek through every level's index
// and filter.
const (
	stepGap = 16
	stepRun = 4
)

// read reads the values of the first of hs, as many as budget allows (at
// least one) and at most storedGroupMax distinct ones, into g.raws, and
// sets each one's k; it returns how many of hs it read. g.raws are valid
// until the next read.
func (g *storedGroup) read(ids []canonical.ID, hs []heldAt, budget int) (int, error) {
	g.vseqs, g.heads, g.buf, g.cur = g.vseqs[:0], g.heads[:0], g.buf[:0], g.cur[:0]
	clear(g.raws)
	g.raws = g.raws[:0]
	end := 0 // hs[:end] are the group's
	for ; end < len(hs); end++ {
		if end > 0 && hs[end].vseq == hs[end-1].vseq {
			hs[end].k = hs[end-1].k // two ids naming one value: damage, which Check names
			continue
		}
		if len(g.vseqs) == storedGroupMax {
			break
		}
		hs[end].k = len(g.vseqs)
		g.vseqs = append(g.vseqs, hs[end].vseq)
	}
	g.spans = append(g.spans[:0], make([]heldSpan, len(g.vseqs))...)
	stop := len(g.vseqs)
	var rerr error
	err := g.values(func(k int, val []byte) bool {
		if k > 0 && len(g.buf) >= budget {
			stop = k
			return false
		}
		if inCurrent(val) {
			g.cur = append(g.cur, k) // its record's current version: read from 'c' below
			return true
		}
		if _, ok := markedRec(val); ok {
			g.heads = append(g.heads, groupHead{k: k, vb: bytes.Clone(val)})
			return true
		}
		env, body, err := splitVersion(val)
		rerr = g.keep(k, env, body, err)
		return rerr == nil
	})
	if err = cmp.Or(err, rerr); err != nil {
		return 0, err
	}
	if err := g.currents(budget, &stop); err != nil {
		return 0, err
	}
	if len(g.heads) > 0 {
		// The heads in key order, once each (two values naming one
		// record are damage, left to the reads below).
		slices.SortFunc(g.heads, func(a, b groupHead) int { return bytes.Compare(a.vb, b.vb) })
		hKeys := make([][]byte, 0, len(g.heads))
		at := make([]int, 0, len(g.heads))
		for i, m := range g.heads {
			if m.k >= stop {
				continue
			}
			if len(at) == 0 || !bytes.Equal(g.heads[at[len(at)-1]].vb, m.vb) {
				rec, _ := markedRec(m.vb)
				hKeys, at = append(hKeys, keys.HeadKey(rec)), append(at, i)
			}
		}
		err = g.s.kv.GetMany(hKeys, func(i int, hb []byte) {
			m := &g.heads[at[i]]
			if rerr != nil {
				return
			}
			if m.k > 0 && len(g.buf) >= budget {
				stop = min(stop, m.k)
				return
			}
			env, body, ok, err := fromHead(hb, g.vseqs[m.k])
			if ok {
				err = g.keep(m.k, env, body, nil)
				m.vb = nil
			}
			rerr = err
		})
		if err = cmp.Or(err, rerr); err != nil {
			return 0, err
		}
		for _, m := range g.heads {
			if m.vb == nil || m.k >= stop {
				continue
			}
			// The head moved on since the value was read (or is not
			// there): read both again.
			env, body, err := readValue(g.s.kv, g.vseqs[m.k], m.vb)
			if err := g.keep(m.k, env, body, err); err != nil {
				return 0, err
			}
		}
	}
	g.raws = g.raws[:0]
	for _, sp := range g.spans {
		var raw []byte
		if sp.end > 0 {
			raw = g.buf[sp.off:sp.end:sp.end]
		}
		g.raws = append(g.raws, raw)
	}
	n := 0
	for ; n < end && hs[n].k < stop; n++ {
		if g.raws[hs[n].k] == nil {
			return 0, Errorf(ErrCorrupt, "damaged: version %s has no value at %d", ids[hs[n].i], hs[n].vseq)
		}
	}
	return n, nil
}

// currents reads the group's values that are in 'c' (g.cur), in vseq
// order, the budget allowing (stop: the first k not read, lowered when it
// runs out).
func (g *storedGroup) currents(budget int, stop *int) error {
	g.cKeys = g.cKeys[:0]
	for _, k := range g.cur {
		if k < *stop {
			g.cKeys = append(g.cKeys, keys.CurrentKey(g.vseqs[k]))
		}
	}
	if len(g.cKeys) == 0 {
		return nil
	}
	var rerr error
	err := g.s.kv.GetMany(g.cKeys, func(i int, cb []byte) {
		k := g.cur[i]
		if rerr != nil || k >= *stop {
			return
		}
		if k > 0 && len(g.buf) >= budget {
			*stop = k
			return
		}
		env, body, err := splitVersion(cb)
		rerr = g.keep(k, env, body, err)
	})
	if err = cmp.Or(err, rerr); err != nil {
		return err
	}
	for _, k := range g.cur {
		if k >= *stop || g.spans[k].end > 0 {
			continue
		}
		// Moved back to 'v' since it was read (its record has another
		// current version now), or damage: read again.
		env, body, err := readValue(g.s.kv, g.vseqs[k], currentMark)
		if err := g.keep(k, env, body, err); err != nil {
			return err
		}
	}
	return nil
}

// keep joins the k-th value's envelope and body into the group's buf.
func (g *storedGroup) keep(k int, env, body []byte, err error) error {
	if err != nil {
		return err
	}
	off := len(g.buf)
	if g.buf, err = appendWhole(g.buf, env, body); err != nil {
		return err
	}
	g.spans[k] = heldSpan{off, len(g.buf)}
	return nil
}

// values calls fn with the index in g.vseqs and the value of each held
// one, in vseq order, until fn returns false: runs close together (stepGap,
// stepRun) by stepping an iterator through their span, the rest by seeks.
func (g *storedGroup) values(fn func(k int, val []byte) bool) error {
	more := true
	seek := func() error { // the seeks gathered in g.vKeys
		if len(g.vKeys) == 0 || !more {
			return nil
		}
		err := g.s.kv.GetMany(g.vKeys, func(i int, val []byte) {
			more = more && fn(g.vAt[i], val)
		})
		g.vKeys, g.vAt = g.vKeys[:0], g.vAt[:0]
		return err
	}
	for i := 0; i < len(g.vseqs) && more; {
		j := i + 1
		for j < len(g.vseqs) && g.vseqs[j]-g.vseqs[j-1] <= stepGap {
			j++
		}
		if j-i < stepRun {
			for ; i < j; i++ {
				g.vKeys, g.vAt = append(g.vKeys, keys.VersionKey(g.vseqs[i])), append(g.vAt, i)
			}
			continue
		}
		if err := seek(); err != nil {
			return err
		}
		if err := g.step(i, j, &more, fn); err != nil {
			return err
		}
		i = j
	}
	return seek()
}

// step reads g.vseqs[i:j] with one iterator over their span.
func (g *storedGroup) step(i, j int, more *bool, fn func(k int, val []byte) bool) error {
	if !*more {
		return nil
	}
	it, err := g.s.kv.NewIter(keys.VersionKey(g.vseqs[i]), keys.VersionKey(g.vseqs[j-1]+1))
	if err != nil {
		return err
	}
	for *more && i < j && it.Next() {
		k := it.Key()
		if len(k) != 9 {
			continue // not a value's key: damage, which Check names
		}
		vseq := binary.BigEndian.Uint64(k[1:])
		for i < j && g.vseqs[i] < vseq {
			i++ // not held: left for read to name
		}
		if i < j && g.vseqs[i] == vseq {
			*more = fn(i, it.Value())
			i++
		}
	}
	return errors.Join(it.Err(), it.Close())
}
