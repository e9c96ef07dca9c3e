package engine

import (
	"context"
	"sync"
	"sync/atomic"
)

// What Close waits for before it closes the KV: the calls in progress
// in the store (Store.calls), then the reads on the KV still open outside
// one (Store.reads: an iterator of IndexReader, say). A backend closed
// under an open iterator reports it leaked (Pebble: "leaked iterators")
// and fails the read. Once Close has begun a new call is ErrClosed, while
// a call already in reads on to its end; once the calls have ended, so is
// a new read.

// gate counts what is in flight and, once shut, refuses more. It costs an
// atomic add each way: it is taken on every call and every read of the
// KV, the admission path's included, and holds nothing through them.
// Close waits for what is in however long it takes, with no deadline: a
// call is never left running on a closed KV. A long read ends soon all the
// same, as it checks at each step whether the store is closing
// (Store.stop).
type gate struct {
	// n is what is in, plus shutBit once shut.
	n    atomic.Int64
	idle chan struct{} // made by shut, closed once nothing is in
	once sync.Once
	// waiting is called when shut starts waiting (tests).
	waiting func()
}

// shutBit marks a shut gate in gate.n, far above any count in flight.
const shutBit = 1 << 62

// enter counts one in; ErrClosed once the gate is shut.
func (g *gate) enter() error {
	if g.n.Add(1) >= shutBit {
		g.leave()
		return ErrClosed
	}
	return nil
}

func (g *gate) leave() {
	if g.n.Add(-1) == shutBit {
		// Shut and nothing in: idle was made before the bit was set.
		g.once.Do(func() { close(g.idle) })
	}
}

// shut refuses what comes after and waits for what is in to leave. It is
// called once.
func (g *gate) shut() {
	g.idle = make(chan struct{})
	if g.n.Add(shutBit) == shutBit {
		return
	}
	if g.waiting != nil {
		g.waiting()
	}
	<-g.idle
}

// stop is why a long read ends at its next step: ErrClosed once Close has
// begun, or ctx's error. A read that yields to its caller goes at the
// caller's pace (a stream to a slow peer); Close waits for it, and it
// ends at the next item instead of reading on to the end.
func (s *Store) stop(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// enter counts a call in the store, to be ended with leave; ErrClosed once
// the store is closing.
func (s *Store) enter() error { return s.calls.enter() }

func (s *Store) leave() { s.calls.leave() }

// countedKV is a store's KV with its reads counted (Store.reads).
type countedKV struct {
	KV
	r *gate
}

func (k countedKV) Get(key []byte) ([]byte, error) {
	if err := k.r.enter(); err != nil {
		return nil, err
	}
	defer k.r.leave()
	return k.KV.Get(key)
}

func (k countedKV) GetMany(keys [][]byte, found func(i int, value []byte)) error {
	if err := k.r.enter(); err != nil {
		return err
	}
	defer k.r.leave()
	return k.KV.GetMany(keys, found)
}

func (k countedKV) NewIter(lower, upper []byte) (Iterator, error) {
	return k.r.iter(func() (Iterator, error) { return k.KV.NewIter(lower, upper) })
}

// iter opens an iterator counted in until it is closed.
func (r *gate) iter(open func() (Iterator, error)) (Iterator, error) {
	if err := r.enter(); err != nil {
		return nil, err
	}
	it, err := open()
	if err != nil {
		r.leave()
		return nil, err
	}
	return &countedIter{Iterator: it, r: r}, nil
}

// countedIter is an iterator counted in until its Close.
type countedIter struct {
	Iterator
	r      *gate
	closed bool
}

func (it *countedIter) Close() error {
	err := it.Iterator.Close()
	if !it.closed {
		it.closed = true
		it.r.leave()
	}
	return err
}
