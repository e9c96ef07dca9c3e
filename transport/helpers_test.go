package transport

import (
	"context"
	"net"
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
