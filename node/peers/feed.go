package peers

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/negentropy/enginestore"
)

// Feed sizes (docs/sync.md §7.3).
const (
	// feedEvents is the store subscription's buffer, one per space.
	feedEvents = 4096
	// feedRing is how many admitted ids a space's feed keeps for its
	// sessions' cursors; a cursor further behind is behind.
	feedRing = 4096
	// feedLinger keeps a feed (and its sync-order index) that no session
	// uses for a while, so sessions opened one after another share one.
	feedLinger = 30 * time.Second
	// maxScopes is how many scopes' indexes a feed keeps.
	maxScopes = 8
)

// feed is one space's live events and sync-order index, shared by every
// session of the space on every connection: one store subscription per
// space, not per session, and an index rebuilt only after the space
// changed, not per NEG-OPEN.
type feed struct {
	space string
	sub   *engine.Subscription

	mu      sync.Mutex
	ring    []canonical.ID // admitted ids, ring[seq % feedRing]
	head    uint64         // the seq the next id gets
	lost    uint64         // ids before this seq may be missing: the subscription dropped some
	gen     uint64         // bumped by every change to the space's sync order taken (and by Passed: batches held)
	follows int            // live sessions' cursors: while none, the subscription is held
	wake    chan struct{}  // closed when ids arrive; made when a cursor waits (nil: none does)
	users   int
	idle    *time.Timer
	gone    chan struct{} // closed when its goroutine (feeds.run) ends
	ended   bool          // the subscription closed: the feed is no longer listed nor kept
	indexes []*orderIndex // most recently used first
}

// orderIndex is a scope's sync-order index, built at generation gen.
type orderIndex struct {
	scope string
	gen   uint64
	st    *enginestore.Store
}

// feeds are a Peers' feeds, by space.
type feeds struct {
	mu     sync.Mutex
	by     map[string]*feed
	builds atomic.Int64 // indexes built, for tests
}

// acquire returns the space's feed, subscribing when there is none; each
// acquire is matched by a release.
func (fs *feeds) acquire(st *engine.Store, spaceID string) *feed {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.by == nil {
		fs.by = map[string]*feed{}
	}
	f := fs.by[spaceID]
	if f == nil {
		f = &feed{space: spaceID, sub: st.Subscribe(spaceID, feedEvents), gone: make(chan struct{})}
		// Held until a live session follows: a session that is not live
		// needs to know only whether the space changed, for its index
		// (generation), not each id admitted, which the store would send
		// and this feed take one by one — a sync's every version.
		f.sub.Hold(true)
		fs.by[spaceID] = f
		go fs.run(f)
	}
	f.mu.Lock()
	f.users++
	if f.idle != nil {
		f.idle.Stop()
		f.idle = nil
	}
	f.mu.Unlock()
	return f
}

// release gives back one acquire; a feed nobody uses ends after
// feedLinger.
func (fs *feeds) release(f *feed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.users--; f.users > 0 || f.ended {
		return
	}
	f.idle = time.AfterFunc(feedLinger, func() { fs.drop(f) })
}

// closeIdle drops at once every feed nobody uses, not waiting for its
// linger (Peers.Close).
func (fs *feeds) closeIdle() {
	fs.mu.Lock()
	var idle []*feed
	for _, f := range fs.by {
		f.mu.Lock()
		if f.users == 0 {
			idle = append(idle, f)
		}
		f.mu.Unlock()
	}
	fs.mu.Unlock()
	for _, f := range idle {
		f.mu.Lock()
		if f.idle != nil {
			f.idle.Stop()
			f.idle = nil
		}
		f.mu.Unlock()
		if fs.drop(f) {
			<-f.gone
		}
	}
}

// drop ends a feed nobody uses: true when it was, false when it is used
// again or gone already.
func (fs *feeds) drop(f *feed) bool {
	fs.mu.Lock()
	f.mu.Lock()
	if f.users > 0 || fs.by[f.space] != f {
		f.mu.Unlock()
		fs.mu.Unlock()
		return false
	}
	delete(fs.by, f.space)
	f.mu.Unlock()
	fs.mu.Unlock()
	f.sub.Close()
	return true
}

// run moves the subscription's events into the ring until it closes,
// then forgets the feed.
func (fs *feeds) run(f *feed) {
	defer close(f.gone)
	f.run()
	fs.forget(f)
}

// forget forgets a feed whose subscription closed: once the store closes
// (the node closes), a feed left listed, or its linger timer left
// pending, would keep the feed, its indexes and through them the store
// and the node reachable for feedLinger after Close.
func (fs *feeds) forget(f *feed) {
	fs.mu.Lock()
	if fs.by[f.space] == f {
		delete(fs.by, f.space)
	}
	fs.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.idle != nil { // started before run marked the feed ended
		f.idle.Stop()
		f.idle = nil
	}
	clear(f.indexes)
	f.indexes = nil
}

// run moves the subscription's events into the ring until it closes.
func (f *feed) run() {
	var dropped int64
	for ev := range f.sub.Events() {
		var d canonical.ID
		ok := ev.Kind == engine.EventAdmitted && ev.Version != nil
		if ok {
			d, ok = ev.Version.Digest()
		}
		f.mu.Lock()
		if n := f.sub.Dropped(); n != dropped {
			dropped = n
			f.lost = f.head + 1 // this one, and those before it, are not all here
			f.gen++
		}
		if ok {
			if f.ring == nil {
				f.ring = make([]canonical.ID, feedRing)
			}
			f.ring[f.head%feedRing] = d
			f.head++
			f.gen++
			f.wakeAll()
		}
		f.mu.Unlock()
	}
	// Closed: the store closes, or the feed was dropped; its sessions'
	// cursors find it lost, and ended: not behind.
	f.mu.Lock()
	f.lost = f.head + 1
	f.ended = true
	f.wakeAll()
	f.mu.Unlock()
}

// wakeAll wakes the cursors waiting for ids, if any: the channel is made
// only when one waits, not for each id of a space no live session
// follows. f.mu is held.
func (f *feed) wakeAll() {
	if f.wake != nil {
		close(f.wake)
		f.wake = nil
	}
}

// cursor is one session's place in its space's feed.
type cursor struct {
	f    *feed
	next uint64
}

// follow starts a cursor at what arrives from now on: the subscription
// sends each event from now on, once it held them (none followed). What
// was committed before is in what the session reconciles, read after
// this; each event after it is taken after the cursor starts (f.mu).
func (f *feed) follow() *cursor {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.follows++; f.follows == 1 {
		f.sub.Hold(false)
	}
	return &cursor{f: f, next: f.head}
}

// unfollow ends a cursor: once none follows, the subscription holds its
// events again, counting them (generation).
func (f *feed) unfollow() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.follows--; f.follows == 0 {
		f.sub.Hold(true)
	}
}

// generation counts the changes to the space's sync order: those taken,
// and those the subscription counted while held. f.mu is held.
func (f *feed) generation() uint64 { return f.gen + uint64(f.sub.Passed()) }

// readState is what a cursor's read found besides the ids.
type readState int

const (
	readOn     readState = iota // the ids are all there were; wait on the channel
	readBehind                  // some were lost to the cursor: the session is behind
	readClosed                  // the feed's subscription closed (the store closes): not behind
)

// read returns the ids that arrived since the last read, a channel closed
// when more arrive, and whether the cursor can read on.
func (c *cursor) read(buf []canonical.ID) ([]canonical.ID, <-chan struct{}, readState) {
	f := c.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.next < f.lost || f.head-c.next > feedRing {
		if f.ended {
			return buf, nil, readClosed
		}
		return buf, nil, readBehind
	}
	for ; c.next < f.head; c.next++ {
		buf = append(buf, f.ring[c.next%feedRing])
	}
	if f.wake == nil {
		f.wake = make(chan struct{})
	}
	return buf, f.wake, readOn
}

// behind reports whether ids arrived, or wait in the subscription, that
// the cursor has not read.
func (c *cursor) behind() bool {
	f := c.f
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.next < f.head || len(f.sub.Events()) > 0
}

// index returns a Store over the scope's sync order for one session: a
// fork of the index built since the space last changed, or one built now
// (and kept for the next session).
func (f *feed) index(ctx context.Context, st *engine.Store, sc enginestore.Scope, builds *atomic.Int64) (*enginestore.Store, error) {
	key := strings.Join(sc.Collections, " ")
	f.mu.Lock()
	gen := f.generation()
	for i, ix := range f.indexes {
		if ix.scope == key && ix.gen == gen {
			copy(f.indexes[1:i+1], f.indexes[:i])
			f.indexes[0] = ix
			f.mu.Unlock()
			return ix.st.Fork(ctx), nil
		}
	}
	f.mu.Unlock()
	// Built with the store's own context's lifetime, not the session's:
	// the index outlives this session.
	builds.Add(1)
	built, err := enginestore.Build(context.WithoutCancel(ctx), enginestore.Engine{Store: st}, sc, enginestore.Options{})
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	if f.generation() == gen && !f.ended { // an ended feed keeps no index
		f.indexes = append([]*orderIndex{{scope: key, gen: gen, st: built}}, f.indexes...)
		kept := f.indexes[:0]
		for i, ix := range f.indexes {
			dup := i > 0 && ix.scope == key // built meanwhile by another session
			if ix.gen == gen && !dup && len(kept) < maxScopes {
				kept = append(kept, ix)
			}
		}
		clear(f.indexes[len(kept):])
		f.indexes = kept
	}
	f.mu.Unlock()
	return built.Fork(ctx), nil
}
