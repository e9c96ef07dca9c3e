package engine

import (
	"context"
	"errors"
	"sync"

	"github.com/minca-go/minca/record"
)

// A Pipeline admits the batches of one source (a peer, a folder, an
// import, the node's own writes) in order, each stage on a goroutine of
// its own working on a different batch: while one batch commits, the next
// is decided ([Store.Submit]) and the one after has its versions made
// (Stages.Versions: decoded, signed) and checked on every core
// ([Store.Prepare]). Each batch's result is handed to Stages.Done in
// order, once it is durable — or once it failed: then none of it is in
// the store, and a batch decided on top of one that failed fails too, as
// it was decided on writes that never landed.
//
// The stages hold one batch each, so a source runs at most three batches
// ahead of what it was told of. The caller's T is what it keeps of a batch
// to act on its outcomes (the messages it answers, the lines it prints);
// the stages may fill it in, in order: what Versions writes to it, Done
// reads.
type Pipeline[T any] struct {
	s    *Store
	ctx  context.Context
	from string
	f    Stages[T]

	mu      sync.Mutex
	closed  bool
	stopErr error         // why Done stopped it
	stop    chan struct{} // closed when stopped
	added   int           // batches added
	settled int           // batches done with (handed to Done, or dropped once stopped)
	idle    chan struct{} // closed and replaced whenever settled catches up with added

	check  chan *piped[T]
	decide chan *piped[T]
	wait   chan *piped[T]
	done   chan struct{} // closed when the last stage has ended
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
	// Decided, when set, is told once a batch is decided — its verdicts
	// are in the judge's view of the store, though not yet durable — or
	// has failed before. Called once a batch, in order, also once the
	// pipeline stopped.
	Decided func(item T)
	// Done acts on a batch's result once it is durable or has failed, in
	// order, on the pipeline's own goroutine. An error stops the pipeline:
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

// piped is a batch on its way through a pipeline.
type piped[T any] struct {
	item T
	vs   []*record.Version
	p    *Prepared
	a    *Admission
	err  error
}

// ErrPipelineClosed: a batch was added to a [Pipeline] after Close.
var ErrPipelineClosed = errors.New("minca/engine: the admission pipeline is closed")

// NewPipeline starts a pipeline admitting into s from one source (from
// names it, as in [Store.Admit]). ctx bounds the checks and decisions;
// what is decided commits whatever ctx does. Close it when done.
func NewPipeline[T any](ctx context.Context, s *Store, from string, f Stages[T]) *Pipeline[T] {
	p := &Pipeline[T]{s: s, ctx: ctx, from: from, f: f, stop: make(chan struct{}), idle: make(chan struct{}),
		check: make(chan *piped[T]), decide: make(chan *piped[T]), wait: make(chan *piped[T]), done: make(chan struct{})}
	go p.checking()
	go p.deciding()
	go p.handing()
	return p
}

// Add hands a batch to the pipeline; it waits while the checking stage is
// busy. Once the pipeline stopped it returns why (the error Done
// returned); ctx ending while it waits returns ctx's error, and the batch
// is not added.
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
	case p.check <- &piped[T]{item: item}:
		return nil
	case <-p.stop:
		p.unadd()
		return p.Err()
	case <-ctx.Done():
		p.unadd()
		return ctx.Err()
	}
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

// Close flushes the pipeline and ends its goroutines; Add fails from then
// on. It returns why the pipeline stopped, if it did. Calling it again
// does nothing more.
func (p *Pipeline[T]) Close() error {
	p.mu.Lock()
	if p.closed {
		err := p.stopErr
		p.mu.Unlock()
		<-p.done
		return err
	}
	p.closed = true
	p.mu.Unlock()
	err := p.Flush()
	close(p.check)
	<-p.done
	return err
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

// checking makes and checks each batch's versions.
func (p *Pipeline[T]) checking() {
	defer close(p.decide)
	for b := range p.check {
		if !p.stopped() {
			b.vs, b.err = p.f.Versions(p.ctx, b.item)
			if b.err == nil && len(b.vs) > 0 {
				b.p, b.err = p.s.Prepare(p.ctx, b.vs)
			}
		}
		p.decide <- b
	}
}

// deciding submits each checked batch, in order.
func (p *Pipeline[T]) deciding() {
	defer close(p.wait)
	for b := range p.decide {
		if b.err == nil && b.p != nil && !p.stopped() {
			b.a, b.err = p.s.Submit(p.ctx, p.from, b.p)
		}
		if p.f.Decided != nil {
			p.f.Decided(b.item)
		}
		p.wait <- b
	}
}

// handing waits for each batch's commit and hands its result to Done.
func (p *Pipeline[T]) handing() {
	defer close(p.done)
	for b := range p.wait {
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
		p.mu.Lock()
		p.settled++
		p.idleLocked()
		p.mu.Unlock()
	}
}

// idleLocked wakes Flush when every batch added is done with; p.mu is
// held.
func (p *Pipeline[T]) idleLocked() {
	if p.settled == p.added {
		close(p.idle)
		p.idle = make(chan struct{})
	}
}
