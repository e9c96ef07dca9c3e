package peers_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

// The wire, written out here from docs/sync.md §7 as a second
// implementation would: a hostile peer crafts its messages by hand.
const (
	tNegOpen  = 0x01
	tNegMsg   = 0x02
	tNegErr   = 0x04
	tWant     = 0x05
	tVersions = 0x06
)

func wire(typ byte, sid uint64, body ...[]byte) []byte {
	b := binary.AppendUvarint([]byte{typ}, sid)
	for _, p := range body {
		b = append(b, p...)
	}
	return b
}

func uv(n int) []byte { return binary.AppendUvarint(nil, uint64(n)) }

// negOpen opens sid on space with an empty set's first negentropy message.
func negOpen(t testing.TB, sid uint64, spaceID string, neg []byte) []byte {
	t.Helper()
	if neg == nil {
		v := negentropy.NewVector(0)
		v.Seal()
		cl, err := negentropy.NewClient(v, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if neg, err = cl.Initiate(); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := json.Marshal(map[string]any{"space": spaceID, "live": true})
	return wire(tNegOpen, sid, uv(len(p)), p, neg)
}

// negOpenIn opens sid on some collections of a space.
func negOpenIn(t testing.TB, sid uint64, spaceID string, colls []string) []byte {
	v := negentropy.NewVector(0)
	v.Seal()
	cl, _ := negentropy.NewClient(v, 1<<20)
	neg, err := cl.Initiate()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := json.Marshal(map[string]any{"space": spaceID, "collections": colls, "live": true})
	return wire(tNegOpen, sid, uv(len(p)), p, neg)
}

func versions(flag byte, sid uint64, raws ...[]byte) []byte {
	b := wire(tVersions, sid, []byte{flag})
	for _, r := range raws {
		b = append(b, uv(len(r))...)
		b = append(b, r...)
	}
	return b
}

// hostile is a peer speaking the wire by hand to an honest node.
type hostile struct {
	t    *testing.T
	c    *transport.Conn
	self transport.Self
	link *transporttest.Control // the in-memory link between them
}

func newHostile(t *testing.T, honest *tnode, self transport.Self) *hostile {
	t.Helper()
	return newHostileOver(t, honest, self, nil)
}

// newHostileOver is newHostile over a link with faults f.
func newHostileOver(t *testing.T, honest *tnode, self transport.Self, f *transporttest.Faults) *hostile {
	t.Helper()
	if self == nil {
		self = transporttest.Session(t)
	}
	hc, hn, link := transporttest.Pair(t, &transport.Options{Self: self}, honest.topt, f)
	go honest.peers.Serve(context.Background(), hn, false, "accept")
	return &hostile{t: t, c: hc, self: self, link: link}
}

func (h *hostile) send(b []byte) error { return h.c.Send(context.Background(), b) }

// until reads messages until one of type typ for sid arrives, and
// returns its body; it fails after a minute or when the connection ends.
func (h *hostile) until(typ byte, sid uint64) []byte {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		b, err := h.c.Recv(ctx)
		if err != nil {
			h.t.Fatalf("waiting for 0x%02x: %v", typ, err)
		}
		s, n := binary.Uvarint(b[1:])
		if b[0] == typ && s == sid {
			return b[1+n:]
		}
	}
}

func (h *hostile) negErr(sid uint64) (code, msg string) {
	h.t.Helper()
	var e struct{ Code, Message string }
	if err := json.Unmarshal(h.until(tNegErr, sid), &e); err != nil {
		h.t.Fatal(err)
	}
	return e.Code, e.Message
}

// honestPair is a and b syncing live, b the node attacked: what the test
// checks goes on while b is attacked.
func honestPair(t *testing.T) (a, b *tnode, g *space.Genesis) {
	a, b = newNode(t, nil), newNode(t, nil)
	g = shared(t, a, b)
	ca, cb, _ := pair(t, a, b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go b.peers.Serve(ctx, cb, false, "accept")
	go a.peers.Serve(ctx, ca, true, "dial")
	return a, b, g
}

func mangle(t testing.TB, raw []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, _ := json.Marshal(m)
	return b
}

func heap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// Forged and mangled copies of a genuine version are refused and
// remembered only for the peer that sent them; the genuine copy still
// arrives from an honest peer and is kept (02 §3.2, §9.5). A flood of
// forgeries ends the forger's connection with sync/forged, and its key is
// refused for a while.
func TestHostileForgeriesRefused(t *testing.T) {
	a, b, g := honestPair(t)
	// A version b has not seen yet: written on a third node holding the
	// space, so nothing pushes it to b first.
	c := newNode(t, nil)
	if err := c.JoinGenesis(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	v, err := a.Put(context.Background(), g.ID, "app.notes", map[string]any{"text": "genuine"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := a.Store().VersionJSON(context.Background(), enginetest.Digest(v))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "b has the genuine version", func() bool {
		_, _, err := b.Store().Standing(context.Background(), enginetest.Digest(v))
		return err == nil
	})
	// The same on c's side, attacked before an honest copy arrives.
	h := newHostile(t, c, nil)
	sig := mangle(t, raw, func(m map[string]any) {
		s := m["signature"].(string)
		m["signature"] = s[:10] + strings.Repeat("A", 20) + s[30:]
	})
	body := mangle(t, raw, func(m map[string]any) { m["body"] = map[string]any{"text": "forged"} })
	if err := h.send(negOpen(t, 1, g.ID, nil)); err != nil {
		t.Fatal(err)
	}
	h.until(tNegMsg, 1)
	if err := h.send(versions(2, 1, sig, body)); err != nil {
		t.Fatal(err)
	}
	ack := h.until(0x07, 1)
	if len(ack) < 3 || ack[2] != 2 {
		t.Fatalf("ADMITTED %v: want two refused", ack)
	}
	if _, _, err := c.Store().Standing(context.Background(), enginetest.Digest(v)); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("a forgery was stored: %v", err)
	}
	if !c.Store().Refused(h.self.DID(), enginetest.Digest(v)) {
		t.Error("the refusal is not remembered for the forger")
	}
	// The genuine copy from an honest peer is kept.
	ca, cc, _ := pair(t, a, c, nil)
	go c.peers.Serve(context.Background(), cc, false, "accept")
	if _, err := a.peers.Sync(context.Background(), ca, []string{g.ID}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Store().VersionJSON(context.Background(), enginetest.Digest(v))
	if err != nil || string(got) != string(raw) {
		t.Fatalf("the genuine copy: %v", err)
	}
	// A flood of forgeries of a version c does not hold ends the session.
	v2, err := a.Put(context.Background(), g.ID, "app.notes", map[string]any{"text": "genuine 2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err = a.Store().VersionJSON(context.Background(), enginetest.Digest(v2)); err != nil {
		t.Fatal(err)
	}
	var flood [][]byte
	for i := range 300 {
		flood = append(flood, mangle(t, raw, func(m map[string]any) { m["body"] = map[string]any{"text": "forged", "n": i} }))
	}
	go func() { // this forger reads, so it hears why it is ended
		for {
			if _, err := h.c.Recv(context.Background()); err != nil {
				return
			}
		}
	}()
	for i := 0; i < len(flood); i += 100 {
		if err := h.send(versions(2, 1, flood[i:i+100]...)); err != nil {
			break
		}
	}
	select {
	case <-h.c.Done():
	case <-time.After(time.Minute):
		t.Fatal("the forger's connection was not ended")
	}
	if code := transport.Code(h.c.Err()); code != peers.CodeForged {
		t.Fatalf("ended with %s, want %s", code, peers.CodeForged)
	}
	// Its key is refused for a while.
	again := newHostile(t, c, h.self)
	select {
	case <-again.c.Done():
	case <-time.After(time.Minute):
		t.Fatal("the forger's key connected again")
	}
	if code := transport.Code(again.c.Err()); code != peers.CodeForged {
		t.Fatalf("the forger's key again: %s, want %s", code, peers.CodeForged)
	}
	// Honest sessions go on.
	a.put(g.ID, "app.notes", 7)
	eventually(t, 10*time.Second, "a and b still sync", func() bool { return converged([]*tnode{a, b}, g.ID) })
}

// Versions already held, sent again and again, end the session with
// sync/useless, and memory stays flat.
func TestHostileUselessFlood(t *testing.T) {
	a, b, g := honestPair(t)
	for i := range 8 {
		a.put(g.ID, "app.notes", i)
	}
	eventually(t, 10*time.Second, "b has a's versions", func() bool { return converged([]*tnode{a, b}, g.ID) })
	var held [][]byte
	for raw, err := range b.Store().ExportJSON(context.Background(), g.ID) {
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, raw)
	}
	batch := make([][]byte, 0, 1024)
	for len(batch) < 1024 {
		batch = append(batch, held[len(batch)%len(held)])
	}
	h := newHostile(t, b, nil)
	h.send(negOpen(t, 1, g.ID, nil))
	h.until(tNegMsg, 1)
	before := heap()
	var peak uint64
	code := ""
	for i := 0; i < 20 && code == ""; i++ {
		if err := h.send(versions(2, 1, batch...)); err != nil {
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		for {
			m, err := h.c.Recv(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if m[0] == 0x07 {
				break
			}
			if m[0] == tNegErr {
				var e struct{ Code, Message string }
				json.Unmarshal(m[2:], &e)
				code = e.Code
				break
			}
		}
		cancel()
		peak = max(peak, heap())
	}
	if code != peers.CodeUseless {
		t.Fatalf("ended with %q, want %s", code, peers.CodeUseless)
	}
	t.Logf("heap before %d KiB, peak %d KiB", before>>10, peak>>10)
	if peak > before+64<<20 {
		t.Errorf("heap grew from %d to %d bytes", before, peak)
	}
	a.put(g.ID, "app.notes", 99)
	eventually(t, 10*time.Second, "a and b still sync", func() bool { return converged([]*tnode{a, b}, g.ID) })
}

// Each of these ends the attacker's session, or its connection, with a
// reason, and the honest pair goes on.
func TestHostileProtocolAbuse(t *testing.T) {
	a, b, g := honestPair(t)
	t.Run("malformed negentropy", func(t *testing.T) {
		h := newHostile(t, b, nil)
		h.send(negOpen(t, 1, g.ID, []byte{0x61, 0xff, 0xff, 0xff}))
		if code, _ := h.negErr(1); code != peers.CodeNegMalformed {
			t.Fatalf("code %s", code)
		}
		// The connection goes on: another session opens.
		h.send(negOpen(t, 2, g.ID, nil))
		h.until(tNegMsg, 2)
	})
	t.Run("endless wants", func(t *testing.T) {
		// A link that holds 16 bytes in flight, like a socket's full
		// buffers: once the peer stops reading, the node's answers stop
		// going out, so its WANTs queue up whatever the speed of the
		// answers (a WANT of ids not held is answered in microseconds,
		// faster than the next arrives).
		h := newHostileOver(t, b, nil, &transporttest.Faults{Buffer: 16})
		h.send(negOpen(t, 1, g.ID, nil))
		h.until(tNegMsg, 1)
		ids := make([]byte, 32*1024)
		for i := range 10 {
			ids[0] = byte(i)
			if h.send(wire(tWant, 1, []byte{0}, ids)) != nil {
				break
			}
		}
		if code, _ := h.negErr(1); code != peers.CodeWantFlood {
			t.Fatalf("code %s", code)
		}
	})
	t.Run("a message that is not one", func(t *testing.T) {
		h := newHostile(t, b, nil)
		h.send([]byte{0x99, 0x01})
		<-h.c.Done()
		if code := transport.Code(h.c.Err()); code != peers.CodeMalformed {
			t.Fatalf("code %s", code)
		}
	})
	t.Run("an answer nobody asked for", func(t *testing.T) {
		h := newHostile(t, b, nil)
		h.send(negOpen(t, 1, g.ID, nil))
		h.until(tNegMsg, 1)
		h.send(versions(1, 1))
		if code, _ := h.negErr(1); code != peers.CodeUnexpected {
			t.Fatalf("code %s", code)
		}
	})
	t.Run("a frame over the limit", func(t *testing.T) {
		x, y, _ := transporttest.Stream(nil)
		go func() {
			c, err := transport.Handshake(context.Background(), transport.NewStreamLink(y), b.topt, transport.HandshakeOptions{Role: transport.Responder})
			if err == nil {
				b.peers.Serve(context.Background(), c, false, "accept")
			}
		}()
		link := transport.NewStreamLink(x)
		c, err := transport.Handshake(context.Background(), link, &transport.Options{Self: transporttest.Session(t)}, transport.HandshakeOptions{Role: transport.Initiator})
		if err != nil {
			t.Fatal(err)
		}
		// Past the Conn, straight onto the stream: 4 MiB announced.
		x.Write([]byte{0x00, 0x40, 0x00, 0x00, 0x01})
		<-c.Done()
		if code := transport.Code(c.Err()); code != transport.CodeFrameTooLarge {
			t.Fatalf("code %s", code)
		}
	})
	a.put(g.ID, "app.notes", 1)
	eventually(t, 10*time.Second, "a and b still sync", func() bool { return converged([]*tnode{a, b}, g.ID) })
}

// A connection that stalls inside a frame is ended when no whole frame
// arrives for the idle time (slowloris).
func TestHostileSlowloris(t *testing.T) {
	b := newNode(t, &peers.Options{Transport: &transport.Options{IdleTimeout: 400 * time.Millisecond, KeepAlive: 100 * time.Millisecond}})
	x, y, _ := transporttest.Stream(nil)
	done := make(chan *transport.Conn, 1)
	go func() {
		c, err := transport.Handshake(context.Background(), transport.NewStreamLink(y), b.topt, transport.HandshakeOptions{Role: transport.Responder})
		if err == nil {
			done <- c
			b.peers.Serve(context.Background(), c, false, "accept")
		}
	}()
	_, err := transport.Handshake(context.Background(), transport.NewStreamLink(x), &transport.Options{Self: transporttest.Session(t)}, transport.HandshakeOptions{Role: transport.Initiator})
	if err != nil {
		t.Fatal(err)
	}
	bc := <-done
	x.Write([]byte{0x00, 0x00, 0x10, 0x00, 0x01, 0x01}) // a 4 KiB frame, two bytes of it
	select {
	case <-bc.Done():
	case <-time.After(time.Minute):
		t.Fatal("the stalled connection was not ended")
	}
	if code := transport.Code(bc.Err()); code != transport.CodeIdle {
		t.Fatalf("code %s", code)
	}
}

// A peer asking for a private space it may not read gets the answer a
// space not held gets, byte for byte; a member of it, and a keeper it
// names, may read it; an expired note does not connect at all.
func TestHostileAccess(t *testing.T) {
	b := newNode(t, nil)
	member := transporttest.Session(t)
	priv, err := space.NewGenesis(space.GenesisOptions{Name: "private", Private: true,
		Founders: []string{b.Account(), member.Note().Iss}, CreatedAt: "2026-12-01T00:00:00Z", Nonce: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.JoinGenesis(context.Background(), priv); err != nil {
		t.Fatal(err)
	}
	answer := func(self transport.Self, spaceID string) (string, string) {
		h := newHostile(t, b, self)
		h.send(negOpen(t, 7, spaceID, nil))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		m, err := h.c.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(m[:2]), string(m[2:])
	}
	other := transporttest.Session(t) // another account's note
	t1, m1 := answer(other, priv.ID)
	t2, m2 := answer(other, "bnotheldnotheldnotheldnotheldnotheldnotheldnotheldnot")
	if t1 != t2 || m1 != m2 || t1[0] != tNegErr {
		t.Fatalf("a private space answers %q %s, one not held %q %s", t1, m1, t2, m2)
	}
	if !strings.Contains(m1, peers.CodeNotHeld) {
		t.Fatalf("answer %s", m1)
	}
	if typ, _ := answer(member, priv.ID); typ[0] != tNegMsg {
		t.Fatalf("a member's open is answered with 0x%02x", typ[0])
	}
	carrier := transport.Carrier(transporttest.NewKey(t))
	if typ, _ := answer(carrier, priv.ID); typ[0] != tNegErr {
		t.Fatal("a carrier the space does not name may read it")
	}
	// An expired note is refused at the who exchange (06 §2.9).
	expired := transporttest.SessionOf(t, transporttest.NewKey(t), time.Now().Add(-time.Minute).Unix())
	x, y, _ := transporttest.Stream(nil)
	refused := make(chan error, 1)
	go func() {
		_, err := transport.Handshake(context.Background(), transport.NewStreamLink(y), b.topt, transport.HandshakeOptions{Role: transport.Responder})
		refused <- err
	}()
	// Its own clock lies, so it shows the note; b checks at now.
	past := func() time.Time { return time.Now().Add(-time.Hour) }
	transport.Handshake(context.Background(), transport.NewStreamLink(x), &transport.Options{Self: expired, Now: past}, transport.HandshakeOptions{Role: transport.Initiator})
	if code := transport.Code(<-refused); code != transport.CodeWhoExpired {
		t.Fatalf("an expired note: %v", err)
	}
}

// A version whose writer's line names a version before it that is not
// held makes the receiver ask for that one (02 §4.10).
func TestWritersLineAsksForWhatIsMissing(t *testing.T) {
	a := newNode(t, nil)
	g := shared(t, a)
	b := newNode(t, &peers.Options{Collections: map[string][]string{g.ID: {"app.chat"}}})
	if err := b.JoinGenesis(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	v1, err := a.Put(context.Background(), g.ID, "app.chat", map[string]any{"text": "one"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := a.Put(context.Background(), g.ID, "app.chat", map[string]any{"text": "two"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v2.Log == nil || v2.Log.Prev != v1.ID {
		t.Fatalf("v2's line: %+v", v2.Log)
	}
	raw, _ := a.Store().VersionJSON(context.Background(), enginetest.Digest(v2))
	h := newHostile(t, b, nil)
	h.send(negOpenIn(t, 1, g.ID, []string{"app.chat"}))
	h.until(tNegMsg, 1)
	h.send(versions(2, 1, raw))
	want := h.until(tWant, 1)
	d, _ := canonicalDigest(v1.ID)
	if len(want) != 33 || string(want[1:]) != string(d[:]) {
		t.Fatalf("WANT %x, want v1's digest %x", want, d)
	}
}
