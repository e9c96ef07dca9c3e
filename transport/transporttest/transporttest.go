// Package transporttest holds what tests of code above transport/ need:
// in-memory links with injected faults (dropped, reset mid-frame, delayed,
// stalled mid-frame), a network of named peers to dial over them, session
// identities, and a relay that can be restarted on its address. It is for
// tests only; the minca binary never links it.
package transporttest

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/transport"
)

// Session makes an account and a session key with a note from it, in force
// for an hour: what a node shows in who.
func Session(t testing.TB) *identity.SessionSigner {
	t.Helper()
	return SessionOf(t, NewKey(t), time.Now().Add(time.Hour).Unix())
}

// SessionOf makes a session key with a note from root, ending at exp
// (Unix seconds; 0: no end).
func SessionOf(t testing.TB, root *identity.PrivateKey, exp int64) *identity.SessionSigner {
	t.Helper()
	key := NewKey(t)
	n, err := identity.IssueNote(root, identity.NoteOptions{Aud: key.DID(), Cmd: "/", Exp: exp})
	if err != nil {
		t.Fatal(err)
	}
	s, err := identity.NewSessionSigner(key, n)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// NewKey makes a P-256 key.
func NewKey(t testing.TB) *identity.PrivateKey {
	t.Helper()
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Pair returns two proven connections over one in-memory link with faults
// f: a is the initiator, b the responder. Both are closed when the test
// ends.
func Pair(t testing.TB, a, b *transport.Options, f *Faults) (*transport.Conn, *transport.Conn, *Control) {
	t.Helper()
	x, y, ctl := Stream(f)
	type res struct {
		c   *transport.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := transport.Handshake(context.Background(), transport.NewStreamLink(y), b, transport.HandshakeOptions{Role: transport.Responder})
		ch <- res{c, err}
	}()
	ca, err := transport.Handshake(context.Background(), transport.NewStreamLink(x), a, transport.HandshakeOptions{Role: transport.Initiator})
	rb := <-ch
	if err != nil || rb.err != nil {
		t.Fatalf("transporttest: handshake: %v / %v", err, rb.err)
	}
	t.Cleanup(func() { ca.Close(); rb.c.Close() })
	return ca, rb.c, ctl
}

// Network is peers reachable by name over in-memory links, each with the
// network's faults. Dial fits transport.Redial. Safe for concurrent use.
type Network struct {
	mu        sync.Mutex
	faults    Faults
	listeners map[string]*listener
	down      map[string]bool
	links     []*Control
}

type listener struct {
	opts   *transport.Options
	handle func(context.Context, *transport.Conn)
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewNetwork makes a network whose new links have faults f (nil: none).
func NewNetwork(f *Faults) *Network {
	n := &Network{listeners: map[string]*listener{}, down: map[string]bool{}}
	if f != nil {
		n.faults = *f
	}
	return n
}

// SetFaults changes the faults of links made from now on.
func (n *Network) SetFaults(f Faults) {
	n.mu.Lock()
	n.faults = f
	n.mu.Unlock()
}

// Listen makes name reachable: each connection dialled to it is proven
// with opts and served by handle on its own goroutine, and closed when
// handle returns. The returned stop ends them all.
func (n *Network) Listen(name string, opts *transport.Options, handle func(ctx context.Context, c *transport.Conn)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{opts: opts, handle: handle, ctx: ctx, cancel: cancel}
	n.mu.Lock()
	n.listeners[name] = l
	n.mu.Unlock()
	return func() {
		n.mu.Lock()
		if n.listeners[name] == l {
			delete(n.listeners, name)
		}
		n.mu.Unlock()
		cancel()
		l.wg.Wait()
	}
}

// SetDown makes dials to name fail (down) or work again, as a peer that is
// switched off; connections already open are not touched (see ResetAll).
func (n *Network) SetDown(name string, down bool) {
	n.mu.Lock()
	n.down[name] = down
	n.mu.Unlock()
}

// ResetAll resets every link made so far.
func (n *Network) ResetAll() {
	n.mu.Lock()
	links := append([]*Control(nil), n.links...)
	n.mu.Unlock()
	for _, c := range links {
		c.Reset()
	}
}

// Links returns the Control of every link made so far, oldest first.
func (n *Network) Links() []*Control {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*Control(nil), n.links...)
}

// Dial connects to name as the initiator, proving this end with opts. A
// name not listening, or down, fails with transport.ErrUnreachable.
func (n *Network) Dial(ctx context.Context, name string, opts *transport.Options) (*transport.Conn, error) {
	n.mu.Lock()
	l := n.listeners[name]
	down := n.down[name]
	f := n.faults
	n.mu.Unlock()
	if l == nil || down || l.ctx.Err() != nil {
		return nil, fmt.Errorf("transporttest: %s: %w", name, transport.ErrUnreachable)
	}
	x, y, ctl := Stream(&f)
	n.mu.Lock()
	n.links = append(n.links, ctl)
	n.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		c, err := transport.Handshake(l.ctx, transport.NewStreamLink(y), l.opts, transport.HandshakeOptions{Role: transport.Responder})
		if err != nil {
			return
		}
		stop := context.AfterFunc(l.ctx, func() { c.Close() })
		defer stop()
		l.handle(l.ctx, c)
		c.Close()
	}()
	return transport.Handshake(ctx, transport.NewStreamLink(x), opts, transport.HandshakeOptions{Role: transport.Initiator})
}

// RelayServer is a relay on a loopback port that a test can stop and start
// again on the same address.
type RelayServer struct {
	t     testing.TB
	opts  *transport.RelayOptions
	addr  string
	mu    sync.Mutex
	relay *transport.Relay
	ln    *transport.Listener
}

// StartRelay starts a relay (ropts nil: defaults) on a loopback port; it
// is stopped when the test ends.
func StartRelay(t testing.TB, ropts *transport.RelayOptions) *RelayServer {
	t.Helper()
	s := &RelayServer{t: t, opts: ropts, addr: "127.0.0.1:0"}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// URL is the relay's ws:// URL.
func (s *RelayServer) URL() string { return "ws://" + s.addr + transport.PathRelay }

// Relay is the relay running now, or nil while stopped.
func (s *RelayServer) Relay() *transport.Relay {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.relay
}

// Start starts the relay again on its address after Stop.
func (s *RelayServer) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.relay != nil {
		return nil
	}
	r, err := transport.NewRelay(&transport.Options{Self: transport.Carrier(NewKey(s.t))}, s.opts)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(transport.PathRelay, r)
	var ln *transport.Listener
	for i := 0; i < 100; i++ { // the port may linger a moment after Stop
		if ln, err = transport.Listen(s.addr, mux, nil); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		r.Close()
		return err
	}
	s.relay, s.ln, s.addr = r, ln, ln.Addr().String()
	return nil
}

// Stop stops the relay: every member's connection ends.
func (s *RelayServer) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.relay == nil {
		return
	}
	s.ln.Close()
	s.relay.Close()
	s.relay, s.ln = nil, nil
}

// Restart stops the relay and starts it again on the same address.
func (s *RelayServer) Restart() error {
	s.Stop()
	return s.Start()
}
