package index

import (
	"errors"
	"fmt"
	"sync"

	"github.com/minca-go/minca/engine"
)

// LiveKind is how a record's place in a live query's result changed.
type LiveKind uint8

const (
	// Enter: the record now passes the query (new, or changed to pass).
	Enter LiveKind = iota + 1
	// Changed: the record passed and still passes, with a new current
	// version.
	Changed
	// Leave: the record passed and no longer does (changed, deleted,
	// withdrawn, or its current version is a stub awaiting its body).
	Leave
)

func (k LiveKind) String() string {
	switch k {
	case Enter:
		return "enter"
	case Changed:
		return "change"
	case Leave:
		return "leave"
	}
	return "unknown"
}

// LiveChange is one change of a live query's result.
type LiveChange struct {
	Kind LiveKind
	// Entry is the record's current version (Enter, Changed), or the
	// version that left (Leave).
	Entry Entry
}

// Why a live query ended, besides its Close and the store's (then Err is
// nil, or wraps engine.ErrClosed).
var (
	// ErrSlow: the reader did not take changes as fast as they came, and
	// its buffer filled (Options.LiveBuffer).
	ErrSlow = errors.New("minca/index: live query dropped: its reader fell behind")
	// ErrBehind: the index's dispatcher fell behind the store's events
	// (Options.EventBuffer), so changes may have been missed.
	ErrBehind = errors.New("minca/index: live query dropped: the index fell behind the store's events")
)

// Live is a live query: the changes of its result as they are committed,
// in commit order, each once. It holds no result: start it, then Find the
// current result. Every change committed after Watch returns is
// delivered; one committed just before may be too, and one committed
// between Watch and Find may be in both (each carries its version's id).
type Live struct {
	space string
	q     *bound
	c     chan LiveChange
	d     *dispatcher
	err   error // why it ended; set before c is closed
}

// Changes is the channel changes arrive on; it is closed when the live
// query ends (Close, too slow, the store closed): then Err says why.
func (l *Live) Changes() <-chan LiveChange { return l.c }

// Err is why the live query ended: nil after Close, ErrSlow, ErrBehind, or
// an error wrapping engine.ErrClosed. Read it once Changes is closed.
func (l *Live) Err() error {
	l.d.mu.Lock()
	defer l.d.mu.Unlock()
	return l.err
}

// Close ends the live query.
func (l *Live) Close() { l.d.end(l, nil) }

// Watch starts a live query in one space: q's collection and where (a
// query with order, limit or cursor is refused), "$me" standing for
// account.
func (ix *Index) Watch(space string, q *Query, account string) (*Live, error) {
	if err := q.live(); err != nil {
		return nil, err
	}
	if space == "" {
		return nil, refuse(CodeSpace, "", "a live query watches one space, and none was named")
	}
	b, err := q.bind(account)
	if err != nil {
		return nil, err
	}
	st, err := ix.store()
	if err != nil {
		return nil, err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.live == nil {
		ix.live = &dispatcher{ix: ix, lives: map[*Live]struct{}{}, sub: st.Subscribe("", ix.opts.EventBuffer), ended: make(chan struct{})}
		go ix.live.run()
	}
	d := ix.live
	l := &Live{space: space, q: b, c: make(chan LiveChange, ix.opts.LiveBuffer), d: d}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return nil, fmt.Errorf("minca/index: Watch: %w", engine.ErrClosed)
	}
	d.lives[l] = struct{}{}
	return l, nil
}

// Close stops the live queries (they end with engine.ErrClosed): each
// has ended, its channel closed, when Close returns.
func (ix *Index) Close() {
	ix.mu.Lock()
	d := ix.live
	ix.live = nil
	ix.mu.Unlock()
	if d != nil {
		d.sub.Close()
		<-d.ended // run holds no lock of ix's while it ends them
	}
}

// dispatcher reads the store's events and hands each record change the
// index saw (change, on EventCurrent) to the live queries of its space.
type dispatcher struct {
	ix    *Index
	sub   *engine.Subscription
	mu    sync.Mutex // guards lives, done, and sends and closes on their channels
	lives map[*Live]struct{}
	done  bool
	ended chan struct{} // closed when run has ended every live query
}

func (d *dispatcher) run() {
	defer close(d.ended)
	why := fmt.Errorf("minca/index: live query: %w", engine.ErrClosed)
	for e := range d.sub.Events() {
		if d.sub.Dropped() > 0 {
			why = fmt.Errorf("%w: more than %d events waited", ErrBehind, d.ix.opts.EventBuffer)
			// A new dispatcher starts with the next Watch.
			d.ix.mu.Lock()
			if d.ix.live == d {
				d.ix.live = nil
			}
			d.ix.mu.Unlock()
			d.sub.Close()
			break
		}
		ch, ok := e.Indexed.(*change)
		if !ok {
			continue
		}
		d.mu.Lock()
		for l := range d.lives {
			if l.space == ch.space {
				d.deliver(l, ch)
			}
		}
		d.mu.Unlock()
	}
	d.mu.Lock()
	d.done = true
	for l := range d.lives {
		d.endLocked(l, why)
	}
	d.mu.Unlock()
}

// deliver hands l what ch did to its result; d.mu is held.
func (d *dispatcher) deliver(l *Live, ch *change) {
	in := func(x *doc) bool { return x != nil && x.collection == l.q.Collection && match(l.q.where, x) }
	was, is := in(ch.old), in(ch.new)
	var lc LiveChange
	switch {
	case is && !was:
		lc = LiveChange{Kind: Enter, Entry: ch.new.entry()}
	case is && was:
		lc = LiveChange{Kind: Changed, Entry: ch.new.entry()}
	case was:
		lc = LiveChange{Kind: Leave, Entry: ch.old.entry()}
	default:
		return
	}
	lc.Entry.JSON = append([]byte(nil), lc.Entry.JSON...) // each reader's own
	select {
	case l.c <- lc:
	default:
		d.endLocked(l, fmt.Errorf("%w: its buffer of %d changes was full", ErrSlow, cap(l.c)))
	}
}

func (d *dispatcher) end(l *Live, why error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.endLocked(l, why)
}

func (d *dispatcher) endLocked(l *Live, why error) {
	if _, ok := d.lives[l]; !ok {
		return
	}
	delete(d.lives, l)
	l.err = why
	close(l.c)
}
