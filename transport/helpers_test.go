package transport

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/identity"
)

// account is a root key; its session makes a session key and a note for it.
type account struct {
	t    testing.TB
	root *identity.PrivateKey
}

func newAccount(t testing.TB) *account {
	t.Helper()
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return &account{t: t, root: k}
}

// session makes a session key with a note from the account, exp and nbf in
// Unix seconds (0: none).
func (a *account) session(exp, nbf int64) *identity.SessionSigner {
	a.t.Helper()
	key, err := identity.GenerateKey()
	if err != nil {
		a.t.Fatal(err)
	}
	n, err := identity.IssueNote(a.root, identity.NoteOptions{Aud: key.DID(), Cmd: "/", Exp: exp, Nbf: nbf})
	if err != nil {
		a.t.Fatal(err)
	}
	s, err := identity.NewSessionSigner(key, n)
	if err != nil {
		a.t.Fatal(err)
	}
	return s
}

func hourFromNow() int64 { return time.Now().Add(time.Hour).Unix() }

// webSocketPair serves one connection over loopback WebSocket and dials
// it: the server's end and the client's, each with its own account's
// session as Self over the options given. Both close with the test.
func webSocketPair(t *testing.T, serverOpts, clientOpts Options) (server, client *Conn) {
	t.Helper()
	serverOpts.Self = newAccount(t).session(hourFromNow(), 0)
	clientOpts.Self = newAccount(t).session(hourFromNow(), 0)
	sent := make(chan *Conn, 1)
	s, err := NewServer(&serverOpts, nil, func(ctx context.Context, c *Conn) {
		sent <- c
		<-ctx.Done()
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(PathPeer, s)
	l, err := Listen("127.0.0.1:0", mux, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); s.Close() })
	c, err := Dial(context.Background(), l.URL(PathPeer), &clientOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return <-sent, c
}

func newKey(t testing.TB) *identity.PrivateKey {
	t.Helper()
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

type result struct {
	c   *Conn
	err error
}

// pair runs both handshakes over an in-memory pipe and returns both
// outcomes.
func pair(t testing.TB, a, b *Options, ba, bb Binding) (result, result) {
	t.Helper()
	x, y := net.Pipe()
	return pairOver(t, NewStreamLink(x), NewStreamLink(y), a, b, ba, bb)
}

func pairOver(t testing.TB, la, lb Link, a, b *Options, ba, bb Binding) (result, result) {
	t.Helper()
	ctx := context.Background()
	ch := make(chan result, 1)
	go func() {
		c, err := Handshake(ctx, lb, b, HandshakeOptions{Role: Responder, Binding: bb})
		ch <- result{c, err}
	}()
	c, err := Handshake(ctx, la, a, HandshakeOptions{Role: Initiator, Binding: ba})
	ra := result{c, err}
	rb := <-ch
	t.Cleanup(func() {
		for _, r := range []result{ra, rb} {
			if r.c != nil {
				r.c.Close()
			}
		}
	})
	return ra, rb
}

// mustPair is pair where both ends must succeed.
func mustPair(t testing.TB, a, b *Options) (*Conn, *Conn) {
	t.Helper()
	ra, rb := pair(t, a, b, Binding{}, Binding{})
	if ra.err != nil || rb.err != nil {
		t.Fatalf("handshake: initiator %v, responder %v", ra.err, rb.err)
	}
	return ra.c, rb.c
}

func wantCode(t testing.TB, err error, code string, remote bool) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("error %v (%T), want *Error %s", err, err, code)
	}
	if e.Code != code || e.Remote != remote {
		t.Fatalf("error %v: code %s remote %v, want %s remote %v", err, e.Code, e.Remote, code, remote)
	}
}

type revokedSet map[string]bool

func (r revokedSet) Revoked(_ context.Context, key string) bool { return r[key] }

// heldPort keeps one loopback port for a whole test, so a server can stop
// and start again on the same address without another process taking the
// port in between. While no server is attached, a connection is closed as
// soon as it is accepted: a dial fails as it does to a server that is down.
type heldPort struct {
	ln  net.Listener
	mu  sync.Mutex
	cur *portGate
}

func holdPort(t testing.TB) *heldPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &heldPort{ln: ln}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			g := p.cur
			p.mu.Unlock()
			if g == nil {
				c.Close()
				continue
			}
			select {
			case g.conns <- c:
			case <-g.closed:
				c.Close()
			}
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return p
}

// serve starts a Listener serving h on the held port; closing it leaves
// the port held.
func (p *heldPort) serve(h http.Handler) *Listener {
	g := &portGate{p: p, conns: make(chan net.Conn), closed: make(chan struct{})}
	p.mu.Lock()
	p.cur = g
	p.mu.Unlock()
	return serveOn(g, h, false)
}

// portGate is the net.Listener one server on a heldPort sees.
type portGate struct {
	p      *heldPort
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (g *portGate) Accept() (net.Conn, error) {
	select {
	case c := <-g.conns:
		return c, nil
	case <-g.closed:
		return nil, net.ErrClosed
	}
}

func (g *portGate) Close() error {
	g.once.Do(func() {
		g.p.mu.Lock()
		if g.p.cur == g {
			g.p.cur = nil
		}
		g.p.mu.Unlock()
		close(g.closed)
	})
	return nil
}

func (g *portGate) Addr() net.Addr { return g.p.ln.Addr() }

// within waits for ch, failing the test if nothing arrives in a minute: a
// guard against a hang, far beyond what any step takes, never a
// measurement.
func within[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s: nothing within a minute", what)
	}
	var zero T
	return zero
}
