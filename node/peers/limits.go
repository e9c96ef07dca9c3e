package peers

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/minca-go/minca/internal/rate"
)

// Limits bound what one peer may cost this node, in bytes, sessions,
// opens and forgeries (docs/sync.md, Limits). A zero field takes its
// default; a negative one is refused.
type Limits struct {
	// SendQueue is how many bytes one connection may hold built and not
	// yet written. A session's writer waits for room before it builds an
	// answer or a push; a negentropy answer is cut to the room left (at
	// least 4 KiB, more rounds). Default 4 MiB.
	SendQueue int
	// RecvQueue is how many bytes of one connection's messages may wait
	// to be handled. Past it the connection's reader stops reading, and
	// the peer's sends wait on the link. Default 4 MiB.
	RecvQueue int
	// SlowAfter is how long a session waits for the peer to read an
	// answer it asked for before the peer sends more that needs one
	// (a NEG-MSG with the last answer unread, a push past its
	// acknowledgements): past it the connection ends with sync/slow.
	// Meanwhile nothing more of the peer's is read. Default 30 s.
	SlowAfter time.Duration
	// LiveSessions is how many live sessions a peer may have opened here
	// at once, counted by its key and, apart, by its source address.
	// Past it NEG-OPEN gets sync/sessions. Default 256.
	LiveSessions int
	// OpenRate is how many NEG-OPENs a second a peer may send, by key and
	// by address, beyond a burst of OpenBurst; past it NEG-OPEN gets
	// sync/rate. Defaults 16 a second, burst 256.
	OpenRate  float64
	OpenBurst int
	// Forgeries is how many versions failing the crypto gate (02 §3.3: a
	// signature, id or body hash that does not hold) a peer may send
	// within ForgeryWindow. Past it its connections end with sync/forged
	// and its key and address are refused for RefuseFor. Defaults 16,
	// 1 minute, 10 minutes.
	Forgeries     int
	ForgeryWindow time.Duration
	RefuseFor     time.Duration
}

// The defaults of [Limits].
const (
	DefaultSendQueue    = 4 << 20
	DefaultRecvQueue    = 4 << 20
	DefaultSlowAfter    = 30 * time.Second
	DefaultLiveSessions = 256
	DefaultOpenRate     = 16
	DefaultOpenBurst    = 256
	DefaultForgeries    = 16
	DefaultForgeryWin   = time.Minute
	DefaultRefuseFor    = 10 * time.Minute
)

func (l *Limits) resolve() error {
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"SendQueue", &l.SendQueue, DefaultSendQueue}, {"RecvQueue", &l.RecvQueue, DefaultRecvQueue},
		{"LiveSessions", &l.LiveSessions, DefaultLiveSessions}, {"OpenBurst", &l.OpenBurst, DefaultOpenBurst},
		{"Forgeries", &l.Forgeries, DefaultForgeries},
	} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 {
			return fmt.Errorf("minca/peers: Limits.%s %d is negative", f.name, *f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"SlowAfter", &l.SlowAfter, DefaultSlowAfter}, {"ForgeryWindow", &l.ForgeryWindow, DefaultForgeryWin},
		{"RefuseFor", &l.RefuseFor, DefaultRefuseFor},
	} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 {
			return fmt.Errorf("minca/peers: Limits.%s %v is negative", f.name, *f.v)
		}
	}
	if l.OpenRate == 0 {
		l.OpenRate = DefaultOpenRate
	}
	if l.OpenRate < 0 || math.IsNaN(l.OpenRate) {
		return fmt.Errorf("minca/peers: Limits.OpenRate %v is negative", l.OpenRate)
	}
	return nil
}

// maxTracked bounds each of guard's tables: past it the entries that
// say least (expired refusals) go first, then any.
const maxTracked = 1 << 16

// guard keeps what is counted per peer across its connections: live
// sessions, the rate of opens, forgeries and refusals, each by key and by
// source address ("" for a connection with none, WebRTC's: by key only).
type guard struct {
	l Limits

	opens *rate.Buckets

	mu      sync.Mutex
	live    map[string]int
	forged  map[string][]time.Time
	refused map[string]time.Time
}

func newGuard(l Limits) *guard {
	return &guard{l: l, opens: rate.New(l.OpenRate, l.OpenBurst), live: map[string]int{},
		forged: map[string][]time.Time{}, refused: map[string]time.Time{}}
}

// names are the table keys of a peer: its key and its address.
func names(key, addr string) []string {
	out := []string{"k " + key}
	if addr != "" {
		out = append(out, "a "+addr)
	}
	return out
}

// takeLive counts a live session for the peer, or says which bound it
// would pass.
func (g *guard) takeLive(key, addr string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, n := range names(key, addr) {
		if g.live[n] >= g.l.LiveSessions {
			return fmt.Sprintf("%d live sessions from this peer's %s, the most taken", g.l.LiveSessions, map[byte]string{'k': "key", 'a': "address"}[n[0]])
		}
	}
	for _, n := range names(key, addr) {
		g.live[n]++
	}
	return ""
}

func (g *guard) giveLive(key, addr string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, n := range names(key, addr) {
		if g.live[n]--; g.live[n] <= 0 {
			delete(g.live, n)
		}
	}
}

// open takes one NEG-OPEN from the peer's buckets, by key and by
// address, or reports false when either is empty.
func (g *guard) open(key, addr string, now time.Time) bool {
	return g.opens.Take(now, names(key, addr)...)
}

// forgeries counts n versions from the peer that failed the crypto gate;
// past the bound within the window its key and address are refused until
// the time returned (zero while within it).
func (g *guard) forgeries(key, addr string, n int, now time.Time) time.Time {
	if n == 0 {
		return time.Time{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	over := false
	for _, nm := range names(key, addr) {
		ts := g.forged[nm]
		keep := ts[:0]
		for _, t := range ts {
			if now.Sub(t) < g.l.ForgeryWindow {
				keep = append(keep, t)
			}
		}
		for range n {
			keep = append(keep, now)
		}
		if len(keep) > g.l.Forgeries {
			over = true
			keep = keep[len(keep)-g.l.Forgeries:]
		}
		if len(g.forged) >= maxTracked {
			clear(g.forged)
		}
		g.forged[nm] = keep
	}
	if !over {
		return time.Time{}
	}
	until := now.Add(g.l.RefuseFor)
	for _, nm := range names(key, addr) {
		g.refuseLocked(nm, until, now)
		delete(g.forged, nm)
	}
	return until
}

func (g *guard) refuseLocked(name string, until, now time.Time) {
	if len(g.refused) >= maxTracked {
		for n, t := range g.refused {
			if !t.After(now) {
				delete(g.refused, n)
			}
		}
		for n := range g.refused {
			if len(g.refused) < maxTracked {
				break
			}
			delete(g.refused, n)
		}
	}
	g.refused[name] = until
}

// refusedUntil is when a refusal of the key or the address (either may
// be "") ends; zero when neither is refused.
func (g *guard) refusedUntil(key, addr string, now time.Time) time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	var until time.Time
	check := func(n string) {
		if t, ok := g.refused[n]; ok {
			if !t.After(now) {
				delete(g.refused, n)
			} else if t.After(until) {
				until = t
			}
		}
	}
	if key != "" {
		check("k " + key)
	}
	if addr != "" {
		check("a " + addr)
	}
	return until
}
