package carrier

import (
	"sync"
	"sync/atomic"
)

// Event types (docs/carriers.md, Events).
const (
	// EventCarrying: the carrier holds a space for an account — its
	// carry space when a grant is taken, then each space a pass names.
	EventCarrying = "carrying"
	// EventDropped: no account's pass names a space any more; the
	// carrier stops carrying it.
	EventDropped = "dropped"
	// EventDisconnected: the account wrote carry:closed (06 §4.2): it
	// removed the carrier, which forgot its carry space and passes.
	EventDisconnected = "disconnected"
	// EventWake: a version that arrived matches a wake (06 §4.4), saying
	// no more than the carrier sees: which space, which kind of record,
	// and the wake's open.
	EventWake = "wake"
)

// Event is what a carrier reports on its stream. JSON members are
// camelCase; empty ones are left out.
type Event struct {
	Type    string `json:"type"`
	Account string `json:"account,omitempty"`
	Space   string `json:"space,omitempty"`
	// Collection is the kind of record a wake matched.
	Collection string `json:"collection,omitempty"`
	// Open is the wake's open: where the app shows the match.
	Open string `json:"open,omitempty"`
	// Wake is the wake's name, for people.
	Wake string `json:"wake,omitempty"`
	// Version is the id of the version that woke it.
	Version string `json:"version,omitempty"`
}

// Subscription receives a carrier's events from when it was made. C is
// closed when the carrier closes or Close is called. A subscriber that
// falls Buffer events behind loses the newest ones; Lost counts them, so
// a slow reader never holds the carrier up.
type Subscription struct {
	C    <-chan Event
	c    chan Event
	h    *hub
	lost atomic.Uint64
}

// Lost is how many events the subscriber missed by falling behind.
func (s *Subscription) Lost() uint64 { return s.lost.Load() }

// Close ends the subscription.
func (s *Subscription) Close() { s.h.remove(s) }

// DefaultBuffer is a subscription's buffer when Subscribe is given 0.
const DefaultBuffer = 1024

// Subscribe starts a subscription to the carrier's events, buffering up
// to buffer of them (0: DefaultBuffer).
func (c *Carrier) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	return c.hub.add(buffer)
}

type hub struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
}

func newHub() *hub { return &hub{subs: map[*Subscription]struct{}{}} }

func (h *hub) add(buffer int) *Subscription {
	ch := make(chan Event, buffer)
	s := &Subscription{C: ch, c: ch, h: h}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(ch)
		return s
	}
	h.subs[s] = struct{}{}
	return s
}

func (h *hub) remove(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.c)
	}
}

func (h *hub) send(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.c <- e:
		default:
			s.lost.Add(1)
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		delete(h.subs, s)
		close(s.c)
	}
}
