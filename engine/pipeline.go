package engine

import (
	"context"
	"errors"
	"sync"

	"github.com/minca-go/minca/record"
)

// A Pipeline admits the batches of one source (a peer, a folder, an
// import, the node's own writes) in order, each stage working on a
// different batch: while one batch commits, the next is decided
// ([Store.Submit]) and the one after has its versions made
// (Stages.Versions: decoded, signed) and checked on every core
// ([Store.Prepare]). Each batch's result is handed to Stages.Done in
// order, once it is durable — or once it failed: then none of it is in
// the store, and a batch decided on top of one that failed fails too, as
// it was decided on writes that never landed.
//
// Each stage holds one batch at a time, so a source runs at most three
// batches ahead of what it was told of. A batch in flight has a goroutine
// of its own, which takes it through the stages in turn, each once the
// batch before has left it: an idle pipeline runs nothing, and a source
// that sends nothing (an idle session) costs no goroutines. The caller's
// T is what it keeps of a batch to act on its outcomes (the messages it
// answers, the lines it prints); the stages may fill it in, in order:
// what Versions writes to it, Done reads.
type Pipeline[T any] struct {
	s     *Store
	ctx   context.Context
	from  string
	f     Stages[T]
	slots chan struct{} // one taken by each batch in flight

	mu      sync.Mutex
	closed  bool
	stopErr error         // why Done stopped it
	stop    chan struct{} // closed when stopped
	added   int           // batches added
	settled int           // batches done with (handed to Done, or dropped once stopped)
	idle    chan struct{} // closed and replaced whenever settled catches up with added
	last    *piped[T]     // the batch added last, while in flight: the next follows it
}

// Stages are what a caller of [NewPipeline] supplies: where a batch's
// versions come from, and what to do with its outcomes.
type Stages[T any] struct {
	// Versions makes a batch's versions, on the checking stage (beside
	// deciding and committing): decodes them, leaves out what need not be
	// admitted, signs them. An error fails the batch alone: Done is given
	// it. No versions: nothing is admitted, and Done is still called, in
	// order.
	Versions func(ctx context.Context, item T) ([]*record.Version, error)
	// ReadAhead, when set, gives on the checking stage what was read
	// ahead for a batch ([Store.ReadAhead]; nil: nothing), for a source
	// that reads before it hands its versions over (the node's own
	// writes: once their ids are fixed, beside the sync of their places).
	ReadAhead func(item T) *Ahead
	// Fill, when set, marks every batch as the source's that fills a
	// space ([Prepared.Fill], [NewFilling]).
	Fill *Filling
	// Before, when set, is waited for before a decided batch commits
	// ([Prepared.Before]): what must be durable before its versions are
	// in the store (the node's log places, 02 §4.10), made durable beside
	// the batch's checking and deciding. An error fails the batch, and the
	// batches decided after it, as a failed commit does.
	Before func(item T) error
	// Decided, when set, is told once a batch is decided — its verdicts
	// are in the judge's view of the store, though not yet durable — or
	// has failed before. Called once a batch, in order, also once the
	// pipeline stopped.
	Decided func(item T)
	// Done acts on a batch's result once it is durable or has failed, in
	// order, on the batch's goroutine (one at a time). An error stops the pipeline:
	// Add returns it from then on, and later batches are waited for but
	// not handed to Done.
	Done func(item T, r Result) error
}

// Result is what a [Pipeline] did with one batch.
type Result struct {
	// Outcomes are one per version, in order.
	Outcomes []Outcome
	// Stored is how many versions the batch stored new, with those that
	// waited (02 §9.5) and came to stand in it.
	Stored int
	// Err is why the batch is not in the store: none of it is.
	Err error
}

// piped is a batch on its way through a pipeline. Its stage channels are
// closed as it leaves each stage, for the batch after it.
type piped[T any] struct {
	item T
	vs   []*record.Version
	p    *Prepared
	a    *Admission
	err  error

	checked, decided, handed chan struct{}
}

// stages is how many batches a pipeline has in flight at most: one
// checked, one decided, one committing.
const stages = 3

// ErrPipelineClosed: a batch was added to a [Pipeline] after Close.
var ErrPipelineClosed = errors.New("minca/engine: the admission pipeline is closed")

// NewPipeline makes a pipeline admitting into s from one source (from
// names it, as in [Store.Admit]). ctx bounds the checks and decisions;
// what is decided commits whatever ctx does. Close it when done.
func NewPipeline[T any](ctx context.Context, s *Store, from string, f Stages[T]) *Pipeline[T] {
	return &Pipeline[T]{s: s, ctx: ctx, from: from, f: f, slots: make(chan struct{}, stages),
		stop: make(chan struct{}), idle: make(chan struct{})}
}

// Add hands a batch to the pipeline; it waits while as many batches as
// there are stages are in flight. Once the pipeline stopped it returns why
// (the error Done returned); ctx ending while it waits returns ctx's
// error, and the batch is not added.
func (p *Pipeline[T]) Add(ctx context.Context, item T) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrPipelineClosed
	}
	if p.stopErr != nil {
		err := p.stopErr
		p.mu.Unlock()
		return err
	}
	p.added++
	p.mu.Unlock()
	select {
	case p.slots <- struct{}{}:
	case <-p.stop:
		p.unadd()
		return p.Err()
	case <-ctx.Done():
		p.unadd()
		return ctx.Err()
	}
	b := &piped[T]{item: item, checked: make(chan struct{}), decided: make(chan struct{}), handed: make(chan struct{})}
	p.mu.Lock()
	prev := p.last
	p.last = b
	p.mu.Unlock()
	go p.through(prev, b)
	return nil
}

// unadd takes back a batch Add counted and did not hand over.
func (p *Pipeline[T]) unadd() {
	p.mu.Lock()
	p.added--
	p.idleLocked()
	p.mu.Unlock()
}

// Flush waits until every batch added is done with (handed to Done, or
// dropped once the pipeline stopped), and returns why it stopped, if it
// did.
func (p *Pipeline[T]) Flush() error {
	for {
		p.mu.Lock()
		if p.settled == p.added {
			err := p.stopErr
			p.mu.Unlock()
			return err
		}
		idle := p.idle
		p.mu.Unlock()
		<-idle
	}
}

// Close flushes the pipeline; Add fails from then on. It returns why the
// pipeline stopped, if it did. Calling it again does nothing more.
func (p *Pipeline[T]) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	return p.Flush()
}

// Err is why the pipeline stopped: the error Done returned, or nil.
func (p *Pipeline[T]) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopErr
}

func (p *Pipeline[T]) stopped() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

// through takes b through the stages, each once prev (the batch added
// before it; nil when none was in flight) has left it: its versions made
// and checked, then decided, then waited for and handed to Done.
func (p *Pipeline[T]) through(prev, b *piped[T]) {
	if prev != nil {
		<-prev.checked
	}
	if !p.stopped() {
		b.vs, b.err = p.f.Versions(p.ctx, b.item)
		if b.err == nil && len(b.vs) > 0 {
			b.p, b.err = p.s.Prepare(p.ctx, b.vs)
		}
		if b.err == nil && b.p != nil {
			b.p.Fill(p.f.Fill)
		}
		if b.err == nil && b.p != nil && p.f.ReadAhead != nil {
			b.p.ReadAhead(p.f.ReadAhead(b.item))
		}
		if b.err == nil && b.p != nil && p.f.Before != nil {
			item := b.item
			b.p.Before(func() error { return p.f.Before(item) })
		}
	}
	close(b.checked)

	if prev != nil {
		<-prev.decided
	}
	if b.err == nil && b.p != nil && !p.stopped() {
		b.a, b.err = p.s.Submit(p.ctx, p.from, b.p)
	}
	if p.f.Decided != nil {
		p.f.Decided(b.item)
	}
	close(b.decided)

	if prev != nil {
		<-prev.handed
	}
	r := Result{Err: b.err}
	if b.a != nil {
		r.Outcomes, r.Err = b.a.Wait()
		if r.Err == nil {
			r.Stored = b.a.stored
		}
	}
	if !p.stopped() {
		if err := p.f.Done(b.item, r); err != nil {
			p.mu.Lock()
			p.stopErr = err
			close(p.stop)
			p.mu.Unlock()
		}
	}
	close(b.handed)
	<-p.slots
	p.mu.Lock()
	if p.last == b {
		p.last = nil // nothing follows it: its item is not kept
	}
	p.settled++
	p.idleLocked()
	p.mu.Unlock()
}

// idleLocked wakes Flush when every batch added is done with; p.mu is
// held.
func (p *Pipeline[T]) idleLocked() {
	if p.settled == p.added {
		close(p.idle)
		p.idle = make(chan struct{})
	}
}
