package engine

import (
	"bytes"
	"cmp"
	"context"
	"slices"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
)

// VersionsJSON is [Store.VersionJSON] for many versions at once: it calls
// found with each held one's index in ids and its canonical JSON, in
// ascending index order; what is not held is skipped. It reads the ids'
// entries and then their values each in one sorted pass
// ([KV.GetMany]), which costs much less than two point reads a version:
// a peer asking for many versions at once is answered with it.
func (s *Store) VersionsJSON(ctx context.Context, ids []canonical.ID, found func(i int, raw []byte) error) error {
	if err := s.check(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	// The ids in key order, without repeats (GetMany's contract); each
	// repeat is answered with its first.
	byID := make([]int, len(ids))
	for i := range byID {
		byID[i] = i
	}
	slices.SortStableFunc(byID, func(a, b int) int { return slices.Compare(ids[a][:], ids[b][:]) })
	idKeys := make([][]byte, 0, len(ids))
	first := make([]int, 0, len(ids)) // the index in ids each key is for
	for j, i := range byID {
		if j > 0 && ids[byID[j-1]] == ids[i] {
			continue
		}
		idKeys = append(idKeys, keys.IDKey(ids[i]))
		first = append(first, i)
	}
	type held struct {
		vseq uint64
		i    int // index in ids
	}
	hs := make([]held, 0, len(idKeys))
	var derr error
	err := s.kv.GetMany(idKeys, func(k int, val []byte) {
		vseq, err := decodeVseq(val)
		if err != nil {
			derr = cmp.Or(derr, err)
			return
		}
		hs = append(hs, held{vseq, first[k]})
	})
	if err = cmp.Or(err, derr); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	slices.SortFunc(hs, func(a, b held) int { return cmp.Compare(a.vseq, b.vseq) })
	vKeys := make([][]byte, 0, len(hs))
	start := make([]int, 0, len(hs)) // the first of hs each value key is for
	for j, h := range hs {
		if j > 0 && hs[j-1].vseq == h.vseq {
			continue // two ids naming one value: damage, which Check names
		}
		vKeys = append(vKeys, keys.VersionKey(h.vseq))
		start = append(start, j)
	}
	raws := make([][]byte, len(ids))
	put := func(j int, env, body []byte) error {
		raw, err := joinWhole(env, body)
		if err != nil {
			return err
		}
		for k := start[j]; k < len(hs) && hs[k].vseq == hs[start[j]].vseq; k++ {
			raws[hs[k].i] = raw
		}
		return nil
	}
	var rerr error
	type marked struct {
		j  int
		vb []byte
	}
	var heads []marked // values a record's head holds, read after GetMany's pass
	err = s.kv.GetMany(vKeys, func(j int, val []byte) {
		if _, ok := markedRec(val); ok {
			heads = append(heads, marked{j, bytes.Clone(val)})
			return
		}
		env, body, err := splitVersion(val)
		if err == nil {
			err = put(j, env, body)
		}
		rerr = cmp.Or(rerr, err)
	})
	if err = cmp.Or(err, rerr); err != nil {
		return err
	}
	if len(heads) > 0 {
		// GetMany takes keys in order, once each; a record named twice
		// (damage) is left to the reads below.
		slices.SortFunc(heads, func(a, b marked) int { return bytes.Compare(a.vb, b.vb) })
		hKeys := make([][]byte, 0, len(heads))
		at := make([]int, 0, len(heads))
		for i, m := range heads {
			if i == 0 || !bytes.Equal(heads[i-1].vb, m.vb) {
				rec, _ := markedRec(m.vb)
				hKeys, at = append(hKeys, keys.HeadKey(rec)), append(at, i)
			}
		}
		err = s.kv.GetMany(hKeys, func(i int, hb []byte) {
			m := &heads[at[i]]
			env, body, ok, err := fromHead(hb, hs[start[m.j]].vseq)
			if ok {
				err = put(m.j, env, body)
				m.vb = nil
			}
			rerr = cmp.Or(rerr, err)
		})
		if err = cmp.Or(err, rerr); err != nil {
			return err
		}
		for _, m := range heads {
			if m.vb == nil {
				continue
			}
			// The head moved on since the value was read (or is not
			// there): read both again.
			env, body, err := readValue(s.kv, hs[start[m.j]].vseq, m.vb)
			if err == nil {
				err = put(m.j, env, body)
			}
			if err != nil {
				return err
			}
		}
	}
	for _, h := range hs {
		if raws[h.i] == nil {
			return Errorf(ErrCorrupt, "damaged: version %s has no value at %d", ids[h.i], h.vseq)
		}
	}
	for j, i := range byID {
		// A repeat is answered with the first of its ids.
		if j > 0 && ids[byID[j-1]] == ids[i] {
			raws[i] = raws[byID[j-1]]
		}
	}
	for i, raw := range raws {
		if raw == nil {
			continue
		}
		if err := found(i, raw); err != nil {
			return err
		}
	}
	return nil
}
