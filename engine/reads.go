package engine

import (
	"sync"
	"time"
)

// The reads in flight on a store's KV (an open iterator, a Get, a
// GetMany), so that Close waits for them before it closes the KV: a
// backend closed under an open iterator reports it leaked (Pebble:
// "leaked iterators") and fails the read. Once Close has begun, a new
// read is ErrClosed.

// readers counts a store's reads in flight.
type readers struct {
	mu      sync.Mutex
	n       int
	closing bool
	idle    chan struct{} // closed when n reaches 0 while closing
	// waiting is called when close starts waiting for reads (tests).
	waiting func()
}

// enter counts a read in; ErrClosed once the store closes.
func (r *readers) enter() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return ErrClosed
	}
	r.n++
	return nil
}

func (r *readers) leave() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n--
	if r.n == 0 && r.idle != nil {
		close(r.idle)
		r.idle = nil
	}
}

// close refuses new reads and waits, at most wait, for those in flight
// to end; false when some had not.
func (r *readers) close(wait time.Duration) bool {
	r.mu.Lock()
	r.closing = true
	if r.n == 0 {
		r.mu.Unlock()
		return true
	}
	if r.idle == nil {
		r.idle = make(chan struct{})
	}
	idle := r.idle
	r.mu.Unlock()
	if r.waiting != nil {
		r.waiting()
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
		return false
	}
}

// closeWait is how long Close waits for the reads in flight: a read
// pages through the store with an iterator it closes between pages, or
// ends at the caller's pace (a stream to a peer); one still open after
// this is left to the backend to report.
const closeWait = 10 * time.Second

// countedKV is a store's KV with its reads counted (readers).
type countedKV struct {
	KV
	r *readers
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
func (r *readers) iter(open func() (Iterator, error)) (Iterator, error) {
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
	r      *readers
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
