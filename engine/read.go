package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// maxCollNames bounds the collection names one sync-order read keeps.
const maxCollNames = 256

// SyncOrder yields a space's held versions (whole or stub; never waiting
// ones) in sync order — createdAt in Unix ms, then the id's digest — from
// the first not below from. It streams from the KV without loading the
// space; an error is yielded once, last.
func (s *Store) SyncOrder(ctx context.Context, space string, from SyncKey) iter.Seq2[SyncItem, error] {
	return func(yield func(SyncItem, error) bool) {
		if err := s.enter(); err != nil {
			yield(SyncItem{}, err)
			return
		}
		defer s.leave()
		p := keys.OrderPrefix(space)
		it, err := s.kv.NewIter(keys.OrderKey(space, from.Millis, from.Digest), keys.PrefixEnd(p))
		if err != nil {
			yield(SyncItem{}, err)
			return
		}
		defer it.Close()
		// A space has few collections: each name is made once a read,
		// not once an item.
		colls := map[string]string{}
		for it.Next() {
			if err := s.stop(ctx); err != nil {
				yield(SyncItem{}, err)
				return
			}
			k := it.Key()
			if len(k) != len(p)+8+32 {
				yield(SyncItem{}, Errorf(ErrCorrupt, "damaged: sync order key"))
				return
			}
			cb, vseq, ok := readOrder(it.Value())
			if !ok {
				yield(SyncItem{}, Errorf(ErrCorrupt, "damaged: sync order value"))
				return
			}
			coll, ok := colls[string(cb)]
			if !ok {
				coll = string(cb)
				if len(colls) < maxCollNames {
					colls[coll] = coll
				}
			}
			item := SyncItem{Millis: binary.BigEndian.Uint64(k[len(p):]), Collection: coll, Vseq: vseq}
			copy(item.Digest[:], k[len(p)+8:])
			if !yield(item, nil) {
				return
			}
		}
		if err := it.Err(); err != nil {
			yield(SyncItem{}, err)
		}
	}
}

// Export yields everything held in a space ("" for every space, one after
// another), as it travels — stubs as stubs — in sync order.
func (s *Store) Export(ctx context.Context, space string) iter.Seq2[*record.Version, error] {
	return func(yield func(*record.Version, error) bool) {
		for raw, err := range s.ExportJSON(ctx, space) {
			if err != nil {
				yield(nil, err)
				return
			}
			v, err := record.Decode(raw)
			if err != nil {
				yield(nil, Errorf(ErrCorrupt, "damaged: exported version: %v", err))
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}

// ExportJSON is [Store.Export] as canonical JSON, read without parsing.
func (s *Store) ExportJSON(ctx context.Context, space string) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		spaces := []string{space}
		if space == "" {
			var err error
			if spaces, err = s.Spaces(ctx); err != nil {
				yield(nil, err)
				return
			}
		}
		for _, sp := range spaces {
			for item, err := range s.SyncOrder(ctx, sp, SyncKey{}) {
				if err != nil {
					yield(nil, err)
					return
				}
				raw, err := readWhole(s.kv, item.Digest)
				if err != nil {
					yield(nil, Errorf(ErrCorrupt, "damaged: version %s in the sync order: %v", item.Digest, err))
					return
				}
				if !yield(raw, nil) {
					return
				}
			}
		}
	}
}

// LineProofs lists the forks and breaks of writers' lines found in a space
// (02 §4.10), each with both versions as stubs.
func (s *Store) LineProofs(ctx context.Context, space string) ([]*record.LineProof, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	p := keys.ProofPrefix(space)
	it, err := s.kv.NewIter(p, keys.PrefixEnd(p))
	if err != nil {
		return nil, err
	}
	type pair struct{ a, b canonical.ID }
	var pairs []pair
	for it.Next() {
		k := it.Key()
		var pr pair
		copy(pr.a[:], k[len(p):])
		copy(pr.b[:], k[len(p)+32:])
		pairs = append(pairs, pr)
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		return nil, err
	}
	var out []*record.LineProof
	for _, pr := range pairs {
		a, err := s.Version(ctx, pr.a)
		if err != nil {
			return nil, err
		}
		b, err := s.Version(ctx, pr.b)
		if err != nil {
			return nil, err
		}
		if proof, ok := record.Fork(a, b); ok {
			out = append(out, proof)
		} else if proof, ok := record.Break(a, b); ok {
			out = append(out, proof)
		} else {
			return nil, Errorf(ErrCorrupt, "damaged: line proof %s %s proves nothing", pr.a, pr.b)
		}
	}
	return out, nil
}

// LineHeldFrom reports whether the store holds a version at any place of
// a writer's line (02 §4.10) from n on: one seek, where [Store.Line] at
// each place is a look-up a place. A writer about to give places n, n+1,
// … asks once whether they are all free.
func (s *Store) LineHeldFrom(ctx context.Context, space, author, collection string, n int64) (bool, error) {
	if err := s.enter(); err != nil {
		return false, err
	}
	defer s.leave()
	if n < 0 || n > record.MaxSafeInteger {
		return false, fmt.Errorf("minca/engine: line place %d is not one a version can take (02 §4.6)", n)
	}
	it, err := s.kv.NewIter(keys.LinePlace(space, author, collection, n), keys.LinePlace(space, author, collection, record.MaxSafeInteger+1))
	if err != nil {
		return false, err
	}
	held := it.Next()
	return held, errors.Join(it.Err(), it.Close())
}

// Line returns the ids held at one place of a writer's line (02 §4.10): one,
// or more when the line forked there.
func (s *Store) Line(ctx context.Context, space, author, collection string, n int64) ([]string, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	b, err := s.kv.Get(keys.LinePlace(space, author, collection, n))
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	vseqs, ds, _, ok := keys.ReadPlace(b)
	if !ok {
		return nil, Errorf(ErrCorrupt, "damaged: line place %s %s %d: a value of %d bytes", author, collection, n, len(b))
	}
	out := make([]string, 0, len(vseqs)+len(ds))
	for _, d := range ds {
		out = append(out, d.String())
	}
	// A place names its versions by vseq: each one's id is its value's.
	for _, vseq := range vseqs {
		vb, err := s.kv.Get(keys.VersionKey(vseq))
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				return nil, Errorf(ErrCorrupt, "damaged: line place %s %s %d names version value %d, which is not there", author, collection, n, vseq)
			}
			return nil, err
		}
		env, _, err := readValue(s.kv, vseq, vb)
		if err != nil {
			return nil, err
		}
		v, err := decodeHeld(env, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, v.ID)
	}
	return out, nil
}
