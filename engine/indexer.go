package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// Indexer keeps indexes of records' readable current versions (02 §9.5)
// in the store's own write batches, so that they never disagree with the
// versions, even across a crash. Package index implements it; the store
// knows nothing of what it indexes, and gives it a table of keys of its own
// (the 'i' table), which nothing else writes.
type Indexer interface {
	// Layout names the indexer's key layout and configuration (not
	// empty). A store is
	// reindexed at Open when the layout its index was kept under differs:
	// when it is new, when the layout changed, and when a batch was
	// written with no indexer (or another one) since.
	Layout() string
	// Current is called inside a write batch, from one goroutine, in the
	// order the batch's changes happen, whenever a record's readable
	// current version changes: a version stored, a body added to a held
	// stub, a standing changed (SetStanding), and for every record that
	// reads when the store is reindexed. It may read and write the index
	// table through b; its writes commit with the batch, or not at all.
	// What it returns travels on this change's [EventCurrent] as
	// Event.Indexed, published once the batch is committed (not when
	// reindexing). An error aborts the batch.
	Current(b IndexBatch, c CurrentChange) (any, error)
}

// CurrentChange is a record's readable current version changing.
type CurrentChange struct {
	Space, Key string
	// Old and New are the readable current versions before and after,
	// whole (a delete included); nil when the record did not or does not
	// read. They are the store's: the indexer must not change them.
	Old, New *record.Version
	// NewJSON is New as canonical JSON (what [Store.CurrentJSON] returns);
	// nil when New is. It belongs to the indexer.
	NewJSON []byte
}

// IndexBatch is what an [Indexer] reads and writes inside a batch. Keys are
// the indexer's own, in its table, and are copied; values passed to Set
// are kept until the batch commits, and values Get returns may be the
// batch's: neither may be changed.
type IndexBatch interface {
	// HeldReader reads held versions (a record's first version, say) as
	// the batch sees them.
	HeldReader
	// Get reads an index key as the batch sees it.
	Get(key []byte) (value []byte, ok bool, err error)
	Set(key, value []byte)
	Delete(key []byte)
}

// indexBatch is a tx seen through the index table.
type indexBatch struct{ *tx }

func (b indexBatch) Get(key []byte) ([]byte, bool, error) {
	return b.get(keys.AppendIndexKey(b.key(), key))
}
func (b indexBatch) Set(key, value []byte) { b.set(keys.AppendIndexKey(b.key(), key), value) }
func (b indexBatch) Delete(key []byte)     { b.del(keys.AppendIndexKey(b.key(), key)) }

// indexCurrent tells the indexer that a record's readable current version
// went from what oh reads to what nh reads (the caller knows they differ),
// and returns what the indexer returned. at is a whole version of the
// record at hand (nil when none), decoded already.
func (t *tx) indexCurrent(space, key string, oh, nh head, at *record.Version) (any, error) {
	ix := t.s.opts.Indexer
	if ix == nil {
		return nil, nil
	}
	c := CurrentChange{Space: space, Key: key}
	var err error
	if oh.hasFirst && oh.firstH.whole {
		env, body, err := t.firstValue(oh)
		if err != nil {
			return nil, err
		}
		if c.Old, err = decodeHeld(env, body); err != nil {
			return nil, err
		}
	}
	if nh.hasFirst && nh.firstH.whole {
		env, body, err := t.firstValue(nh)
		if err != nil {
			return nil, err
		}
		if c.NewJSON, err = joinWhole(env, body); err != nil {
			return nil, err
		}
		if at != nil && at.ID == nh.first.String() {
			c.New = at
		} else if c.New, err = decodeHeld(env, body); err != nil {
			return nil, err
		}
	}
	out, err := ix.Current(indexBatch{t}, c)
	if err != nil {
		return nil, fmt.Errorf("minca/engine: indexing %s: %w", key, err)
	}
	return out, nil
}

// IndexReader reads the index table an [Indexer] keeps (keys as it wrote
// them). Reads see whole batches; an iterator sees one consistent view
// where the backend gives one (Pebble, SQLite). It also has GetMany (as
// KV's), and is a [ReverseReader] when the store's KV is.
func (s *Store) IndexReader() Reader {
	if _, ok := s.raw.(ReverseReader); ok {
		return reverseIndexReader{indexReader{s}}
	}
	return indexReader{s}
}

type indexReader struct{ s *Store }

func (r indexReader) Get(key []byte) ([]byte, error) {
	if err := r.s.enter(); err != nil {
		return nil, err
	}
	defer r.s.leave()
	return r.s.kv.Get(keys.IndexKey(key))
}

func (r indexReader) NewIter(lower, upper []byte) (Iterator, error) {
	if err := r.s.enter(); err != nil {
		return nil, err
	}
	defer r.s.leave()
	it, err := r.s.kv.NewIter(r.bounds(lower, upper))
	if err != nil {
		return nil, err
	}
	return indexIter{it}, nil
}

// GetMany looks keys of the index table up, given in ascending order
// without repeats, in one pass (KV.GetMany); value is valid only during
// the call.
func (r indexReader) GetMany(ks [][]byte, found func(i int, value []byte)) error {
	if err := r.s.enter(); err != nil {
		return err
	}
	defer r.s.leave()
	full := make([][]byte, len(ks))
	for i, k := range ks {
		full[i] = keys.IndexKey(k)
	}
	return r.s.kv.GetMany(full, found)
}

// bounds are the KV's keys of [lower, upper) in the index table.
func (r indexReader) bounds(lower, upper []byte) (lo, hi []byte) {
	hi = keys.PrefixEnd([]byte{keys.Index})
	if upper != nil {
		hi = keys.IndexKey(upper)
	}
	return keys.IndexKey(lower), hi
}

// indexIter strips the table's prefix from the keys it yields.
type indexIter struct{ Iterator }

func (i indexIter) Key() []byte { return i.Iterator.Key()[1:] }

// reindexBatch is how many records a reindexing batch covers.
const reindexBatch = 1000

// Reindex rebuilds the index table from the records' readable current
// versions: it deletes every key of the table, then calls the Indexer's
// Current for each record that reads (Old nil), in batches, and records
// the layout in the last one. A crash part way leaves the layout
// unrecorded, so the next Open reindexes again. Open calls it when the
// layout differs; it publishes no events (nothing readable changes).
func (s *Store) Reindex(ctx context.Context) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	ix := s.opts.Indexer
	if ix == nil {
		return errors.New("minca/engine: Reindex: the store was opened without an indexer")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	s.state.Lock()
	s.st.index = "" // until the last batch: a crash part way reindexes again
	s.state.Unlock()
	table := []byte{keys.Index}
	if err := s.batched(ctx, table, keys.PrefixEnd(table), func(t *tx, k, _ []byte) error {
		t.del(k)
		return nil
	}); err != nil {
		return fmt.Errorf("minca/engine: reindex: clearing: %w", err)
	}
	heads := []byte{keys.History}
	if err := s.batched(ctx, heads, keys.PrefixEnd(heads), func(t *tx, k, val []byte) error {
		if !keys.IsHead(k) {
			return nil
		}
		h, err := decodeHead(val)
		if err != nil || !h.hasFirst || !h.firstH.whole {
			return err
		}
		env, body, err := t.firstValue(h)
		if err != nil {
			return err
		}
		v, err := decodeHeld(env, body)
		if err != nil {
			return err
		}
		_, err = t.indexCurrent(v.Space, v.Key, head{}, h, v)
		return err
	}); err != nil {
		return fmt.Errorf("minca/engine: reindex: %w", err)
	}
	t := s.begin(nil, 0)
	t.st.index = ix.Layout()
	return s.commit(t)
}

// batched calls fn for the keys in [lower, upper), reindexBatch of them a
// batch, each batch committed before the next is read: the iterator is
// closed while a batch commits, as a backend need not let one run across
// its own writes. Events are not published.
func (s *Store) batched(ctx context.Context, lower, upper []byte, fn func(t *tx, k, v []byte) error) error {
	for from := lower; from != nil; {
		if err := ctx.Err(); err != nil {
			return err
		}
		type kv struct{ k, v []byte }
		var chunk []kv
		it, err := s.kv.NewIter(from, upper)
		if err != nil {
			return err
		}
		for len(chunk) < reindexBatch && it.Next() {
			chunk = append(chunk, kv{append([]byte(nil), it.Key()...), append([]byte(nil), it.Value()...)})
		}
		if err := errors.Join(it.Err(), it.Close()); err != nil {
			return err
		}
		from = nil
		if len(chunk) == reindexBatch {
			from = append(chunk[len(chunk)-1].k, 0)
		}
		t := s.begin(nil, 0)
		for _, e := range chunk {
			if err := fn(t, e.k, e.v); err != nil {
				return err
			}
		}
		t.events = nil
		if err := s.commit(t); err != nil {
			return err
		}
	}
	return nil
}

// reindexIfNeeded runs Reindex when the store's index was kept under
// another layout than its Indexer's.
func (s *Store) reindexIfNeeded(ctx context.Context) error {
	if s.opts.Indexer == nil || s.st.index == s.opts.Indexer.Layout() {
		return nil
	}
	if s.opts.Indexer.Layout() == "" {
		return errors.New("minca/engine: Options.Indexer has no layout name")
	}
	return s.Reindex(ctx)
}
