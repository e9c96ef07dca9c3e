package transport

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

func TestWhoValid(t *testing.T) {
	alice, bob := newAccount(t), newAccount(t)
	sa, sb := alice.session(hourFromNow(), 0), bob.session(hourFromNow(), 0)
	ca, cb := mustPair(t, &Options{Self: sa}, &Options{Self: sb})
	if p := ca.Peer(); p.DID != sb.DID() || p.Root != bob.root.DID() || p.Note == nil || p.Carrier() || p.Binding != BindingNone {
		t.Fatalf("initiator sees %+v, want bob's session %s under %s", p, sb.DID(), bob.root.DID())
	}
	if p := cb.Peer(); p.DID != sa.DID() || p.Root != alice.root.DID() {
		t.Fatalf("responder sees %+v, want alice's session", p)
	}
	ctx := context.Background()
	go ca.Send(ctx, []byte("hello bob"))
	m, err := cb.Recv(ctx)
	if err != nil || string(m) != "hello bob" {
		t.Fatalf("Recv = %q, %v", m, err)
	}
	go cb.Send(ctx, []byte{})
	if m, err := ca.Recv(ctx); err != nil || len(m) != 0 {
		t.Fatalf("Recv of an empty message = %q, %v", m, err)
	}
}

func TestWhoCarrierFromNull(t *testing.T) {
	alice := newAccount(t)
	key := newKey(t)
	ca, cb := mustPair(t, &Options{Self: alice.session(hourFromNow(), 0)}, &Options{Self: Carrier(key)})
	if p := ca.Peer(); !p.Carrier() || p.DID != key.DID() || p.Root != "" || p.Note != nil {
		t.Fatalf("a carrier is seen as %+v, want from null with its own key", p)
	}
	if p := cb.Peer(); p.Carrier() {
		t.Fatalf("the carrier sees a carrier: %+v", p)
	}
}

// The note is checked at the checking end's now (06 §2.9): a note that
// its holder still thinks in force is refused by a peer whose clock says
// otherwise.
func TestWhoTimeOfNote(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name     string
		exp, nbf int64
		at       time.Time
		code     string
	}{
		{"expired", now.Add(time.Hour).Unix(), 0, now.Add(2 * time.Hour), CodeWhoExpired},
		{"expired to the second", now.Add(time.Hour).Unix(), 0, time.Unix(now.Add(time.Hour).Unix(), 0), CodeWhoExpired},
		{"not yet valid", now.Add(2 * time.Hour).Unix(), now.Add(-time.Minute).Unix(), now.Add(-time.Hour), CodeWhoNotYet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alice, bob := newAccount(t), newAccount(t)
			a := &Options{Self: alice.session(0, 0), Now: func() time.Time { return tc.at }}
			b := &Options{Self: bob.session(tc.exp, tc.nbf)}
			ra, rb := pair(t, a, b, Binding{}, Binding{})
			wantCode(t, ra.err, tc.code, false)
			toldPeer(t, rb, tc.code)
		})
	}
	t.Run("just in force", func(t *testing.T) {
		alice, bob := newAccount(t), newAccount(t)
		exp := now.Add(time.Hour).Unix()
		a := &Options{Self: alice.session(hourFromNow(), 0), Now: func() time.Time { return time.Unix(exp-1, 0) }}
		mustPair(t, a, &Options{Self: bob.session(exp, 0)})
	})
}

func TestWhoOwnNoteExpired(t *testing.T) {
	alice, bob := newAccount(t), newAccount(t)
	a := &Options{Self: alice.session(time.Now().Add(-time.Minute).Unix(), 0)}
	ra, rb := pair(t, a, &Options{Self: bob.session(hourFromNow(), 0)}, Binding{}, Binding{})
	if ra.err == nil || !strings.Contains(ra.err.Error(), "renew") {
		t.Fatalf("dialling with an expired note of our own: %v, want it named", ra.err)
	}
	if rb.err == nil {
		t.Fatal("the peer of a side that never spoke got a connection")
	}
}

func TestWhoRevoked(t *testing.T) {
	alice, bob := newAccount(t), newAccount(t)
	sb := bob.session(hourFromNow(), 0)
	a := &Options{Self: alice.session(hourFromNow(), 0), Revoked: revokedSet{sb.DID(): true}}
	ra, rb := pair(t, a, &Options{Self: sb}, Binding{}, Binding{})
	wantCode(t, ra.err, CodeWhoRevoked, false)
	toldPeer(t, rb, CodeWhoRevoked)
}

// A channel binding that differs between the ends (a man in the middle
// with a TLS session on each side) makes both signatures fail.
func TestWhoBindingMismatch(t *testing.T) {
	alice, bob := newAccount(t), newAccount(t)
	b1 := Binding{Kind: BindingTLS}
	b1.Data[0] = 1
	b2 := Binding{Kind: BindingTLS}
	b2.Data[0] = 2
	ra, rb := pair(t, &Options{Self: alice.session(hourFromNow(), 0)}, &Options{Self: bob.session(hourFromNow(), 0)}, b1, b2)
	if Code(ra.err) != CodeWhoSignature || Code(rb.err) != CodeWhoSignature {
		t.Fatalf("spliced bindings: %v / %v, want who/signature at both ends", ra.err, rb.err)
	}
	// Same data, another kind: refused too.
	ra, rb = pair(t, &Options{Self: alice.session(hourFromNow(), 0)}, &Options{Self: bob.session(hourFromNow(), 0)}, Binding{Kind: BindingNone}, Binding{Kind: BindingTLS})
	if Code(ra.err) != CodeWhoSignature || Code(rb.err) != CodeWhoSignature {
		t.Fatalf("a downgraded binding: %v / %v, want who/signature", ra.err, rb.err)
	}
}

// rawPeer is a hostile end speaking hello and who by hand.
type rawPeer struct {
	t         *testing.T
	link      Link
	nonce     []byte
	peerNonce []byte
}

func newRawPeer(t *testing.T, link Link, nonce []byte) *rawPeer {
	t.Helper()
	ctx := context.Background()
	if nonce == nil {
		nonce = make([]byte, nonceLen)
		nonce[0] = 7
	}
	r := &rawPeer{t: t, link: link, nonce: nonce}
	errc := make(chan error, 1)
	go func() {
		errc <- link.WriteFrame(ctx, encodeControl(&control{Type: typeHello, V: whoVersion, Nonce: nonce, MaxFrame: DefaultFrame}))
	}()
	f, err := link.ReadFrame(ctx, DefaultFrame)
	if err != nil {
		t.Fatalf("raw peer reading hello: %v", err)
	}
	c, err := decodeControl(f[1:])
	if err != nil {
		t.Fatal(err)
	}
	if c.Type == typeHello {
		r.peerNonce = c.Nonce
	}
	if err := <-errc; err != nil {
		t.Fatalf("raw peer sending hello: %v", err)
	}
	return r
}

func (r *rawPeer) who(from json.RawMessage, key string, sig []byte) {
	r.link.WriteFrame(context.Background(), encodeControl(&control{Type: typeWho, From: from, Key: key, Sig: sig}))
}

// runHonest runs an honest responder's handshake on l.
func runHonest(o *Options, l Link, h HandshakeOptions) <-chan result {
	ch := make(chan result, 1)
	go func() {
		c, err := Handshake(context.Background(), l, o, h)
		ch <- result{c, err}
	}()
	return ch
}

func noteJSON(t *testing.T, n *identity.Note) json.RawMessage {
	b, err := canonical.Marshal(n.Object())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWhoHostile(t *testing.T) {
	alice, xavier := newAccount(t), newAccount(t)
	mallory := newKey(t)
	sx := xavier.session(hourFromNow(), 0)
	for _, tc := range []struct {
		name string
		// send plays the hostile responder's who, given its view.
		send func(r *rawPeer)
		code string
	}{
		{"another account's note, shown by another key", func(r *rawPeer) {
			sig, _ := mallory.Sign(challenge(Responder, Binding{Kind: BindingNone}, r.nonce, r.peerNonce))
			r.who(noteJSON(t, sx.Note()), mallory.DID(), sig)
		}, CodeWhoAudience},
		{"another account's note with a forged aud", func(r *rawPeer) {
			o := sx.Note().Object().Clone()
			p, _ := o.Get("payload")
			p = p.(*canonical.Object).Clone()
			p.(*canonical.Object).Set("aud", mallory.DID())
			o.Set("payload", p)
			b, _ := canonical.Marshal(o)
			sig, _ := mallory.Sign(challenge(Responder, Binding{Kind: BindingNone}, r.nonce, r.peerNonce))
			r.who(b, mallory.DID(), sig)
		}, CodeWhoNote},
		{"a challenge signed for the other role", func(r *rawPeer) {
			sig, _ := sx.Sign(challenge(Initiator, Binding{Kind: BindingNone}, r.nonce, r.peerNonce))
			r.who(noteJSON(t, sx.Note()), sx.DID(), sig)
		}, CodeWhoSignature},
		{"a challenge signed over other nonces", func(r *rawPeer) {
			sig, _ := sx.Sign(challenge(Responder, Binding{Kind: BindingNone}, r.peerNonce, r.nonce))
			r.who(noteJSON(t, sx.Note()), sx.DID(), sig)
		}, CodeWhoSignature},
		{"a key that is not a did:key", func(r *rawPeer) {
			r.who(json.RawMessage("null"), "did:web:example.com", make([]byte, 64))
		}, CodeWhoShape},
		{"a from that is not a note", func(r *rawPeer) {
			r.who(json.RawMessage(`{"type":"minca/ucan/dlg@1"}`), sx.DID(), make([]byte, 64))
		}, CodeWhoNote},
		{"data before who", func(r *rawPeer) {
			r.link.WriteFrame(context.Background(), []byte{kindData, 'x'})
		}, CodeFrameOrder},
		{"a second hello", func(r *rawPeer) {
			r.link.WriteFrame(context.Background(), encodeControl(&control{Type: typeHello, V: 1, Nonce: r.nonce, MaxFrame: MinFrame}))
		}, CodeFrameOrder},
		{"a who missing its sig", func(r *rawPeer) {
			r.link.WriteFrame(context.Background(), append([]byte{kindControl}, `{"type":"who","from":null,"payload":{"key":"`+sx.DID()+`"}}`...))
		}, CodeWhoShape},
		{"a who with a member of its own", func(r *rawPeer) {
			r.link.WriteFrame(context.Background(), append([]byte{kindControl}, `{"type":"who","from":null,"extra":1,"payload":{"key":"x","sig":"y"}}`...))
		}, CodeWhoShape},
		{"an unknown frame kind", func(r *rawPeer) {
			r.link.WriteFrame(context.Background(), []byte{0x7f, 1, 2})
		}, CodeFrameMalformed},
		{"an empty frame", func(r *rawPeer) {
			r.link.WriteFrame(context.Background(), []byte{})
		}, CodeFrameMalformed},
		{"a control frame that is not JSON", func(r *rawPeer) {
			r.link.WriteFrame(context.Background(), []byte{kindControl, '{'})
		}, CodeFrameMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, y := net.Pipe()
			honest := runHonest(&Options{Self: alice.session(hourFromNow(), 0)}, NewStreamLink(x), HandshakeOptions{Role: Initiator})
			r := newRawPeer(t, NewStreamLink(y), nil)
			// Read whatever the honest end sends while we play.
			got := make(chan *control, 4)
			go func() {
				defer close(got)
				for {
					f, err := r.link.ReadFrame(context.Background(), DefaultFrame)
					if err != nil {
						return
					}
					if c, err := decodeControl(f[1:]); err == nil {
						got <- c
					}
				}
			}()
			tc.send(r)
			res := <-honest
			wantCode(t, res.err, tc.code, false)
			var bye *control
			for c := range got {
				if c.Type == typeBye {
					bye = c
				}
			}
			if bye == nil || bye.Code != tc.code {
				t.Fatalf("the hostile end was told %+v, want a bye with %s", bye, tc.code)
			}
			r.link.Close()
		})
	}
}

// A who recorded on one connection is worth nothing on another: its
// signature covers that connection's nonces.
func TestWhoReplayFromAnotherConnection(t *testing.T) {
	alice, bob := newAccount(t), newAccount(t)
	sb := bob.session(hourFromNow(), 0)
	// Connection 1: honest, with a tap on bob's side that keeps his who.
	x, y := net.Pipe()
	tap := &tapLink{Link: NewStreamLink(y)}
	ra, rb := pairOver(t, NewStreamLink(x), tap, &Options{Self: alice.session(hourFromNow(), 0)}, &Options{Self: sb}, Binding{}, Binding{})
	if ra.err != nil || rb.err != nil {
		t.Fatal(ra.err, rb.err)
	}
	recorded := tap.who()
	if recorded == nil {
		t.Fatal("no who recorded")
	}
	// Connection 2: mallory replays it.
	x, y = net.Pipe()
	honest := runHonest(&Options{Self: alice.session(hourFromNow(), 0)}, NewStreamLink(x), HandshakeOptions{Role: Initiator})
	r := newRawPeer(t, NewStreamLink(y), nil)
	go readAll(r.link)
	r.link.WriteFrame(context.Background(), recorded)
	wantCode(t, (<-honest).err, CodeWhoSignature, false)
	// Even with the first connection's nonce repeated, alice's own nonce is
	// new.
	x, y = net.Pipe()
	honest = runHonest(&Options{Self: alice.session(hourFromNow(), 0)}, NewStreamLink(x), HandshakeOptions{Role: Initiator})
	r2 := newRawPeer(t, NewStreamLink(y), tap.nonce())
	go readAll(r2.link)
	r2.link.WriteFrame(context.Background(), recorded)
	wantCode(t, (<-honest).err, CodeWhoSignature, false)
}

// tapLink keeps a copy of the control frames written through it.
type tapLink struct {
	Link
	mu      sync.Mutex
	written [][]byte
}

func (l *tapLink) WriteFrame(ctx context.Context, f []byte) error {
	l.mu.Lock()
	l.written = append(l.written, append([]byte(nil), f...))
	l.mu.Unlock()
	return l.Link.WriteFrame(ctx, f)
}

func (l *tapLink) find(typ string) (*control, []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.written {
		if len(f) > 0 && f[0] == kindControl {
			if c, err := decodeControl(f[1:]); err == nil && c.Type == typ {
				return c, f
			}
		}
	}
	return nil, nil
}

func (l *tapLink) who() []byte { _, f := l.find(typeWho); return f }

func (l *tapLink) nonce() []byte { c, _ := l.find(typeHello); return c.Nonce }

func TestWhoReflectedNonce(t *testing.T) {
	alice := newAccount(t)
	x, y := net.Pipe()
	tapped := &tapLink{Link: NewStreamLink(x)}
	honest := runHonest(&Options{Self: alice.session(hourFromNow(), 0)}, tapped, HandshakeOptions{Role: Initiator})
	yl := NewStreamLink(y)
	f, err := yl.ReadFrame(context.Background(), DefaultFrame)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			if _, err := yl.ReadFrame(context.Background(), DefaultFrame); err != nil {
				return
			}
		}
	}()
	yl.WriteFrame(context.Background(), f) // alice's own hello back to her
	wantCode(t, (<-honest).err, CodeWhoShape, false)
}

// A connection that never completes who is ended at HandshakeTimeout.
func TestWhoSlowloris(t *testing.T) {
	alice := newAccount(t)
	x, y := net.Pipe()
	defer y.Close()
	o := &Options{Self: alice.session(hourFromNow(), 0), HandshakeTimeout: 200 * time.Millisecond}
	start := time.Now()
	honest := runHonest(o, NewStreamLink(x), HandshakeOptions{Role: Responder})
	// Take hello, send half of ours, then nothing.
	go func() {
		buf := make([]byte, 1<<16)
		y.Read(buf)
		y.Write([]byte{0, 0, 0, 90, kindControl, '{'})
	}()
	res := <-honest
	wantCode(t, res.err, CodeWhoTimeout, false)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("refused after %v; the limit was 200ms", d)
	}
}

func TestHandshakeOptionsValidated(t *testing.T) {
	for _, o := range []*Options{
		nil,
		{},
		{Self: Carrier(newKey(t)), MaxFrame: 1000},
		{Self: Carrier(newKey(t)), MaxFrame: MaxFrameCap + 1},
		{Self: Carrier(newKey(t)), IdleTimeout: -time.Second},
		{Self: Carrier(newKey(t)), IdleTimeout: time.Second, KeepAlive: 2 * time.Second},
	} {
		x, _ := net.Pipe()
		if _, err := Handshake(context.Background(), NewStreamLink(x), o, HandshakeOptions{Role: Initiator}); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

func TestWhoExpectedPeer(t *testing.T) {
	alice, bob := newAccount(t), newAccount(t)
	x, y := net.Pipe()
	someoneElse := newKey(t).DID()
	ha := runHonest(&Options{Self: alice.session(hourFromNow(), 0)}, NewStreamLink(x), HandshakeOptions{Role: Initiator, Expect: someoneElse})
	hb := runHonest(&Options{Self: bob.session(hourFromNow(), 0)}, NewStreamLink(y), HandshakeOptions{Role: Responder})
	wantCode(t, (<-ha).err, CodeWhoPeer, false)
	toldPeer(t, <-hb, CodeWhoPeer)
}

// toldPeer checks that the refused end learned the reason: its handshake
// failed with it, or — having finished before the bye arrived — its
// connection ended with it.
func toldPeer(t *testing.T, r result, code string) {
	t.Helper()
	if r.err != nil {
		wantCode(t, r.err, code, true)
		return
	}
	<-r.c.Done()
	wantCode(t, r.c.Err(), code, true)
}

func readAll(l Link) {
	for {
		if _, err := l.ReadFrame(context.Background(), DefaultFrame); err != nil {
			return
		}
	}
}
