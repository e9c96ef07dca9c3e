package enginestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/minca-go/minca/negentropy"
)

// DefaultBlockSize is the number of items a Store indexes as one block.
const DefaultBlockSize = 128

// ErrChanged reports that the sync order no longer holds what the index was
// built from: the engine's snapshot changed under the Store.
var ErrChanged = errors.New("enginestore: sync order changed since the index was built")

// Options configures [Build].
type Options struct {
	// BlockSize is the number of items per indexed block; 0 means
	// [DefaultBlockSize]. Larger blocks use less memory and reread more.
	BlockSize int
}

// Store is a [negentropy.Storage] over a sync order, for one reconciliation
// session. It is not safe for concurrent use. Reads use the context given
// to [Build].
type Store struct {
	ctx    context.Context
	order  SyncOrder
	scope  Scope
	block  int
	size   int
	firsts []negentropy.Item        // first item of each block
	sums   []negentropy.Accumulator // sums[b]: ids of blocks before b
	cache  [2]cached                // the last blocks read
	next   int                      // which cache slot to fill next
	listed *Listed                  // told each item Iterate yields, when set (List)
}

type cached struct {
	block int // -1 when empty
	items []negentropy.Item
	ats   []uint64 // each item's place (Placed.At)
}

// Build indexes the scope's items in one streaming pass over order.
func Build(ctx context.Context, order SyncOrder, scope Scope, opts Options) (*Store, error) {
	bs := opts.BlockSize
	if bs <= 0 {
		bs = DefaultBlockSize
	}
	s := &Store{ctx: ctx, order: order, scope: scope, block: bs}
	s.cache[0].block, s.cache[1].block = -1, -1
	var acc negentropy.Accumulator
	var prev negentropy.Item
	for it, err := range order.Iterate(ctx, scope, negentropy.Item{}) {
		if err != nil {
			return nil, fmt.Errorf("enginestore: indexing space %q: %w", scope.Space, err)
		}
		if s.size > 0 && prev.Compare(it) >= 0 {
			return nil, fmt.Errorf("enginestore: indexing space %q: item %d,%s not above the one before", scope.Space, it.Timestamp, it.ID)
		}
		if it.Timestamp == negentropy.MaxTimestamp {
			return nil, fmt.Errorf("enginestore: indexing space %q: %w: %s", scope.Space, negentropy.ErrInfiniteTimestamp, it.ID)
		}
		if s.size%bs == 0 {
			s.firsts = append(s.firsts, it)
			s.sums = append(s.sums, acc)
		}
		acc.AddID(&it.ID)
		prev = it
		s.size++
	}
	s.sums = append(s.sums, acc)
	return s, nil
}

// Fork is a Store over the same index for another reconciliation: its
// own context and block cache, the index shared. An index built once for
// a space serves every session that opens while the order is unchanged
// (reads still check each block against it, and report [ErrChanged]).
// Fork may be called concurrently with other Forks, never with the
// Store's own reads.
func (s *Store) Fork(ctx context.Context) *Store {
	f := &Store{ctx: ctx, order: s.order, scope: s.scope, block: s.block, size: s.size, firsts: s.firsts, sums: s.sums}
	f.cache[0].block, f.cache[1].block = -1, -1
	return f
}

// Size is the number of items indexed.
func (s *Store) Size() int { return s.size }

func (s *Store) check(begin, end int) error {
	if begin < 0 || begin > end || end > s.size {
		return fmt.Errorf("%w: [%d, %d) of %d", negentropy.ErrRange, begin, end, s.size)
	}
	return nil
}

// load returns the items of block b, from the cache or the engine.
func (s *Store) load(b int) ([]negentropy.Item, error) {
	for i := range s.cache {
		if s.cache[i].block == b {
			return s.cache[i].items, nil
		}
	}
	n := min(s.block, s.size-b*s.block)
	c := &s.cache[s.next]
	s.next = (s.next + 1) % len(s.cache)
	c.block = -1
	c.items, c.ats = c.items[:0], c.ats[:0]
	if err := s.read(b*s.block, n, func(it Placed) bool {
		c.items, c.ats = append(c.items, it.Item), append(c.ats, it.At)
		return true
	}); err != nil {
		return nil, err
	}
	var sum negentropy.Accumulator
	for i := range c.items {
		sum.AddID(&c.items[i].ID)
	}
	want := s.sums[b+1]
	want.Sub(&s.sums[b])
	if sum != want {
		return nil, fmt.Errorf("%w: block %d holds other ids", ErrChanged, b)
	}
	c.block = b
	return c.items, nil
}

// read streams n items from index start, checking the order still matches
// the index.
func (s *Store) read(start, n int, yield func(Placed) bool) error {
	b := start / s.block
	skip := start - b*s.block
	got := 0
	first := true
	for it, err := range placed(s.ctx, s.order, s.scope, s.firsts[b]) {
		if err != nil {
			return fmt.Errorf("enginestore: reading space %q: %w", s.scope.Space, err)
		}
		if first && it.Item != s.firsts[b] {
			return fmt.Errorf("%w: block %d starts at %d,%s", ErrChanged, b, it.Timestamp, it.ID)
		}
		first = false
		if skip > 0 {
			skip--
			continue
		}
		got++
		if !yield(it) || got == n {
			return nil
		}
	}
	if got < n {
		return fmt.Errorf("%w: %d items past index %d, want %d", ErrChanged, got, start, n)
	}
	return nil
}

// Item returns the item at index i ([negentropy.ItemReader]): an item
// read beside a bound, not listed, so not noted in the Store's Listed.
func (s *Store) Item(i int) (negentropy.Item, error) {
	if err := s.check(i, i+1); err != nil {
		return negentropy.Item{}, err
	}
	b := i / s.block
	items, err := s.load(b)
	if err != nil {
		return negentropy.Item{}, err
	}
	return items[i-b*s.block], nil
}

// Iterate streams items begin..end-1 from the engine ([negentropy.Storage]).
func (s *Store) Iterate(begin, end int, yield func(int, negentropy.Item) bool) error {
	if err := s.check(begin, end); err != nil {
		return err
	}
	if begin == end {
		return nil
	}
	if b := begin / s.block; (end-1)/s.block == b {
		items, err := s.load(b)
		if err != nil {
			return err
		}
		off := b * s.block
		ats := s.cache[s.slot(b)].ats
		for i := begin; i < end; i++ {
			if s.listed != nil {
				s.listed.note(&items[i-off].ID, ats[i-off])
			}
			if !yield(i, items[i-off]) {
				break
			}
		}
		return nil
	}
	i := begin
	return s.read(begin, end-begin, func(it Placed) bool {
		if s.listed != nil {
			s.listed.note(&it.ID, it.At)
		}
		i++
		return yield(i-1, it.Item)
	})
}

// slot is the cache slot holding block b, which load just returned.
func (s *Store) slot(b int) int {
	if s.cache[0].block == b {
		return 0
	}
	return 1
}

// List has s note in l each item Iterate yields from now on, with where
// the store holds it: the items a reconciliation's responder lists to
// its peer (and the few it reads for a range's bound).
func (s *Store) List(l *Listed) { s.listed = l }

// prefix is the sum of the ids of the first k items.
func (s *Store) prefix(k int) (negentropy.Accumulator, error) {
	b := k / s.block
	acc := s.sums[b]
	if r := k - b*s.block; r > 0 {
		items, err := s.load(b)
		if err != nil {
			return acc, err
		}
		for i := range r {
			acc.AddID(&items[i].ID)
		}
	}
	return acc, nil
}

// Fingerprint returns the fingerprint of items begin..end-1 from the index's
// sums and at most one block read per edge (§Fingerprint Algorithm).
func (s *Store) Fingerprint(begin, end int) (negentropy.Fingerprint, error) {
	if err := s.check(begin, end); err != nil {
		return negentropy.Fingerprint{}, err
	}
	hi, err := s.prefix(end)
	if err != nil {
		return negentropy.Fingerprint{}, err
	}
	lo, err := s.prefix(begin)
	if err != nil {
		return negentropy.Fingerprint{}, err
	}
	hi.Sub(&lo)
	return hi.Fingerprint(uint64(end - begin)), nil
}

// FindLowerBound returns the first index in [begin, end) whose item is not
// below b, or end ([negentropy.Storage]).
func (s *Store) FindLowerBound(begin, end int, b negentropy.Bound) (int, error) {
	if err := s.check(begin, end); err != nil {
		return 0, err
	}
	// Blocks before the last one starting below b lie wholly below it.
	j := negentropy.SearchItems(s.firsts, b.Item)
	rank := 0
	if j > 0 {
		items, err := s.load(j - 1)
		if err != nil {
			return 0, err
		}
		rank = (j-1)*s.block + negentropy.SearchItems(items, b.Item)
	}
	return min(max(rank, begin), end), nil
}
