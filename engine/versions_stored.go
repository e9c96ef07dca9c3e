package engine

import (
	"bytes"
	"cmp"
	"context"
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
// near-sequential, a group at a time: each group holds at most about
// budget bytes of values (and always one version), read and handed to
// found before the next is read, and no read is open while found runs.
func (s *Store) VersionsStored(ctx context.Context, ids []canonical.ID, budget int, found func(i int, raw []byte) error) error {
	if err := s.check(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	hs, err := s.vseqsOf(ids)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	g := storedGroup{s: s}
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
		if err := ctx.Err(); err != nil {
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
// returns those held, in vseq order (repeats of an id by index).
func (s *Store) vseqsOf(ids []canonical.ID) ([]heldAt, error) {
	byID := make([]int, len(ids))
	for i := range byID {
		byID[i] = i
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
	hs := make([]heldAt, 0, len(ids))
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
	vKeys [][]byte
	vseqs []uint64
	raws  [][]byte
	heads []groupHead
}

// groupHead is a value of the group its record's head holds.
type groupHead struct {
	k  int
	vb []byte // the marker, 0 ‖ rec; nil once read
}

// storedGroupMax is the most values a group reads at once.
const storedGroupMax = 256

// read reads the values of the first of hs, as many as budget allows (at
// least one) and at most storedGroupMax distinct ones, into g.raws, and
// sets each one's k; it returns how many of hs it read.
func (g *storedGroup) read(ids []canonical.ID, hs []heldAt, budget int) (int, error) {
	g.vKeys, g.vseqs, g.heads = g.vKeys[:0], g.vseqs[:0], g.heads[:0]
	clear(g.raws)
	g.raws = g.raws[:0]
	end := 0 // hs[:end] are the group's
	for ; end < len(hs); end++ {
		if end > 0 && hs[end].vseq == hs[end-1].vseq {
			hs[end].k = hs[end-1].k // two ids naming one value: damage, which Check names
			continue
		}
		if len(g.vKeys) == storedGroupMax {
			break
		}
		hs[end].k = len(g.vKeys)
		g.vKeys = append(g.vKeys, keys.VersionKey(hs[end].vseq))
		g.vseqs = append(g.vseqs, hs[end].vseq)
		g.raws = append(g.raws, nil)
	}
	stop, used := len(g.vKeys), 0
	var rerr error
	err := g.s.kv.GetMany(g.vKeys, func(k int, val []byte) {
		if k >= stop || rerr != nil {
			return
		}
		if k > 0 && used >= budget {
			stop = k
			return
		}
		if _, ok := markedRec(val); ok {
			g.heads = append(g.heads, groupHead{k: k, vb: bytes.Clone(val)})
			return
		}
		env, body, err := splitVersion(val)
		if err == nil {
			g.raws[k], err = joinWhole(env, body)
			used += len(g.raws[k])
		}
		rerr = err
	})
	if err = cmp.Or(err, rerr); err != nil {
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
			if m.k > 0 && used >= budget {
				stop = min(stop, m.k)
				return
			}
			env, body, ok, err := fromHead(hb, g.vseqs[m.k])
			if ok {
				g.raws[m.k], err = joinWhole(env, body)
				used += len(g.raws[m.k])
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
			vseq := g.vseqs[m.k]
			env, body, err := readValue(g.s.kv, vseq, m.vb)
			if err == nil {
				g.raws[m.k], err = joinWhole(env, body)
			}
			if err != nil {
				return 0, err
			}
		}
	}
	n := 0
	for ; n < end && hs[n].k < stop; n++ {
		if g.raws[hs[n].k] == nil {
			return 0, Errorf(ErrCorrupt, "damaged: version %s has no value at %d", ids[hs[n].i], hs[n].vseq)
		}
	}
	return n, nil
}
