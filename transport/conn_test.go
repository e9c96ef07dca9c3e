package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"
)

// handshaken returns an honest Conn and the raw link of a peer that has
// passed who, for tests that then misbehave by hand.
func handshaken(t *testing.T, o *Options) (*Conn, Link, net.Conn) {
	t.Helper()
	x, y := net.Pipe()
	peer := newAccount(t).session(hourFromNow(), 0)
	honest := runHonest(o, NewStreamLink(x), HandshakeOptions{Role: Initiator})
	yl := NewStreamLink(y)
	r := newRawPeer(t, yl, nil)
	sig, _ := peer.Sign(challenge(Responder, Binding{Kind: BindingNone}, r.nonce, r.peerNonce))
	go r.who(noteJSON(t, peer.Note()), peer.DID(), sig)
	// The honest who arrives first.
	if _, err := yl.ReadFrame(context.Background(), DefaultFrame); err != nil {
		t.Fatal(err)
	}
	res := <-honest
	if res.err != nil {
		t.Fatal(res.err)
	}
	t.Cleanup(func() { res.c.Close(); y.Close() })
	return res.c, yl, y
}

// drain reads y's frames until it fails, returning the last bye seen.
func drain(l Link) <-chan *control {
	out := make(chan *control, 1)
	go func() {
		var bye *control
		for {
			f, err := l.ReadFrame(context.Background(), MaxFrameCap)
			if err != nil {
				out <- bye
				return
			}
			if f[0] == kindControl {
				if c, err := decodeControl(f[1:]); err == nil && c.Type == typeBye {
					bye = c
				}
			}
		}
	}()
	return out
}

func TestFrameOverTheLimit(t *testing.T) {
	c, _, raw := handshaken(t, &Options{Self: newAccount(t).session(hourFromNow(), 0), MaxFrame: MinFrame})
	byes := drain(NewStreamLink(raw))
	// Only the length prefix: the receiver must refuse before reading on.
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], MinFrame+1)
	raw.Write(hdr[:])
	<-c.Done()
	wantCode(t, c.Err(), CodeFrameTooLarge, false)
	if bye := <-byes; bye == nil || bye.Code != CodeFrameTooLarge {
		t.Fatalf("the sender was told %+v, want frame/too-large", bye)
	}
}

func TestFrameAtTheLimit(t *testing.T) {
	a := &Options{Self: newAccount(t).session(hourFromNow(), 0)}
	b := &Options{Self: newAccount(t).session(hourFromNow(), 0), MaxFrame: MinFrame}
	ca, cb := mustPair(t, a, b)
	if ca.MaxMessage() != MinFrame-1 || cb.MaxMessage() != DefaultFrame-1 {
		t.Fatalf("MaxMessage %d / %d: each end obeys the other's limit", ca.MaxMessage(), cb.MaxMessage())
	}
	msg := make([]byte, MinFrame-1)
	msg[len(msg)-1] = 9
	go ca.Send(context.Background(), msg)
	got, err := cb.Recv(context.Background())
	if err != nil || len(got) != len(msg) || got[len(got)-1] != 9 {
		t.Fatalf("a message at the limit: %d bytes, %v", len(got), err)
	}
	// One byte more is refused here, and the connection goes on.
	wantCode(t, ca.Send(context.Background(), make([]byte, MinFrame)), CodeFrameTooLarge, false)
	if ca.Err() != nil {
		t.Fatalf("refusing an oversized send ended the connection: %v", ca.Err())
	}
}

func TestMalformedAfterWho(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame []byte
		code  string
	}{
		{"unknown kind", []byte{0x02, 'x'}, CodeFrameMalformed},
		{"empty frame", []byte{}, CodeFrameMalformed},
		{"control not JSON", []byte{kindControl, 0xff}, CodeFrameMalformed},
		{"unknown control type", []byte(string(kindControl) + `{"type":"pong"}`), CodeFrameMalformed},
		{"bye with a bad code", []byte(string(kindControl) + `{"type":"bye","payload":{"code":"NOPE","message":""}}`), CodeFrameMalformed},
		{"who again", encodeControl(&control{Type: typeWho, From: []byte("null"), Key: "x", Sig: make([]byte, 64)}), CodeFrameOrder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, yl, _ := handshaken(t, &Options{Self: newAccount(t).session(hourFromNow(), 0)})
			byes := drain(yl)
			yl.WriteFrame(context.Background(), tc.frame)
			<-c.Done()
			wantCode(t, c.Err(), tc.code, false)
			if bye := <-byes; bye == nil || bye.Code != tc.code {
				t.Fatalf("the sender was told %+v, want %s", bye, tc.code)
			}
		})
	}
}

// Short timeouts, on a clock the test moves. Between frames each end has
// two timers set: idle, and the keep-alive tick (half of KeepAlive).
const (
	testIdle      = 300 * time.Millisecond
	testKeepAlive = 100 * time.Millisecond
	testTick      = testKeepAlive / 2
)

func timed(t *testing.T, clk *fakeClock) *Options {
	return &Options{Self: newAccount(t).session(hourFromNow(), 0), IdleTimeout: testIdle, KeepAlive: testKeepAlive, clock: clk}
}

func TestIdlePeerEnded(t *testing.T) {
	clk := newFakeClock()
	c, yl, _ := handshaken(t, timed(t, clk))
	drain(yl) // reads, never writes
	clk.waitTimers(t, nil, testIdle, testTick)
	// A moment short of IdleTimeout only its pings go out.
	clk.Advance(testIdle - time.Millisecond)
	clk.waitTimers(t, nil, testIdle, testTick)
	if c.Err() != nil {
		t.Fatalf("ended before IdleTimeout: %v", c.Err())
	}
	clk.Advance(time.Millisecond)
	within(t, c.Done(), "the end at IdleTimeout")
	wantCode(t, c.Err(), CodeIdle, false)
}

// A peer stalled inside a frame is ended at IdleTimeout too: the timer
// runs until a whole frame has arrived.
func TestStallMidFrame(t *testing.T) {
	clk := newFakeClock()
	c, yl, raw := handshaken(t, timed(t, clk))
	drain(yl)
	clk.waitTimers(t, nil, testIdle, testTick)
	clk.Advance(200 * time.Millisecond)
	clk.waitTimers(t, nil, testIdle, testTick)
	raw.Write([]byte{0, 0, 1, 0, kindData, 1, 2, 3}) // returns once read: the pipe has no buffer
	if c.Err() != nil {
		t.Fatalf("ended early: %v", c.Err())
	}
	clk.Advance(100 * time.Millisecond)
	within(t, c.Done(), "the end at IdleTimeout")
	wantCode(t, c.Err(), CodeIdle, false)
}

// Two quiet ends keep each other's IdleTimeout from ending the
// connection: each pings once it has been silent for KeepAlive.
func TestKeepAliveHoldsQuietConnection(t *testing.T) {
	clk := newFakeClock()
	ca, cb := mustPair(t, timed(t, clk), timed(t, clk))
	ended := make(chan struct{})
	go func() {
		select {
		case <-ca.Done():
		case <-cb.Done():
		}
		close(ended)
	}()
	clk.waitTimers(t, ended, testIdle, testTick, testIdle, testTick)
	// Three IdleTimeouts pass, a keep-alive tick at a time.
	for range 18 {
		clk.Advance(testTick)
		clk.waitTimers(t, ended, testIdle, testTick, testIdle, testTick)
	}
	if ca.Err() != nil || cb.Err() != nil {
		t.Fatalf("a quiet connection ended: %v / %v", ca.Err(), cb.Err())
	}
	if ca.Stats().FramesSent < 8 || cb.Stats().FramesSent < 8 {
		t.Fatalf("pings sent: %d / %d, want one every KeepAlive", ca.Stats().FramesSent, cb.Stats().FramesSent)
	}
}

func TestSendToPeerThatDoesNotRead(t *testing.T) {
	o := &Options{Self: newAccount(t).session(hourFromNow(), 0), WriteTimeout: 300 * time.Millisecond}
	c, _, _ := handshaken(t, o) // the raw peer never reads again
	err := c.Send(context.Background(), []byte("anyone there?"))
	wantCode(t, err, CodeStalled, false)
	wantCode(t, c.Err(), CodeStalled, false)
}

func TestCloseTellsPeer(t *testing.T) {
	ca, cb := mustPair(t, &Options{Self: newAccount(t).session(hourFromNow(), 0)}, &Options{Self: newAccount(t).session(hourFromNow(), 0)})
	go ca.Send(context.Background(), []byte("last words"))
	if m, err := cb.Recv(context.Background()); err != nil || string(m) != "last words" {
		t.Fatal(m, err)
	}
	if err := ca.CloseWith("sync/malformed", "a want list that does not parse"); err != nil {
		t.Fatal(err)
	}
	_, err := cb.Recv(context.Background())
	wantCode(t, err, "sync/malformed", true)
	if err.(*Error).Message != "a want list that does not parse" {
		t.Fatalf("message %q", err.(*Error).Message)
	}
	wantCode(t, ca.Err(), "sync/malformed", false)
	wantCode(t, ca.Send(context.Background(), []byte("x")), "sync/malformed", false)
	if ca.CloseWith("Not A Code", "") == nil {
		t.Fatal("an invalid code accepted")
	}
}

func TestRecvContext(t *testing.T) {
	ca, _ := mustPair(t, &Options{Self: newAccount(t).session(hourFromNow(), 0)}, &Options{Self: newAccount(t).session(hourFromNow(), 0)})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := ca.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Recv = %v", err)
	}
	if ca.Err() != nil {
		t.Fatalf("a Recv that timed out ended the connection: %v", ca.Err())
	}
}

// tcpPair is two proven connections over a loopback TCP socket, framed as
// a byte stream.
func tcpPair(t *testing.T, a, b *Options) (*Conn, *Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	x, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	y := <-accepted
	if y == nil {
		t.Fatal("accept failed")
	}
	ra, rb := pairOver(t, NewStreamLink(x), NewStreamLink(y), a, b, Binding{}, Binding{})
	if ra.err != nil || rb.err != nil {
		t.Fatalf("handshake: %v / %v", ra.err, rb.err)
	}
	return ra.c, rb.c
}

// A connection ended while its peer is still sending tells the peer why,
// and the peer hears it: the closing end stops sending but goes on reading
// until the peer closes, so the peer's writes are not refused and its
// reader gets to the bye, rather than ending with conn/broken.
func TestByeHeardWhilePeerSends(t *testing.T) {
	a := &Options{Self: newAccount(t).session(hourFromNow(), 0), Linger: 20 * time.Second}
	b := &Options{Self: newAccount(t).session(hourFromNow(), 0)}
	ca, cb := tcpPair(t, a, b)
	// cb's reader is held by a message nobody has taken yet, so the bye
	// can only be read after the writes below have had their chance to fail.
	if err := ca.Send(context.Background(), []byte("first")); err != nil {
		t.Fatal(err)
	}
	// cb sends until the socket is full: ca reads one message and waits
	// for a Recv that never comes.
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		msg := make([]byte, 64<<10)
		for cb.Send(context.Background(), msg) == nil {
		}
	}()
	var last int64
	for { // until cb's writes wait
		time.Sleep(50 * time.Millisecond)
		n := cb.Stats().BytesSent
		if n == last && n > 0 {
			break
		}
		last = n
	}
	closed := make(chan struct{})
	go func() {
		ca.CloseWith("sync/forged", "versions that fail the crypto gate")
		close(closed)
	}()
	// Long enough for a refused write to have ended cb.
	time.Sleep(200 * time.Millisecond)
	for {
		if _, err := cb.Recv(context.Background()); err != nil {
			wantCode(t, err, "sync/forged", true)
			break
		}
	}
	within(t, closed, "ca closed once cb had heard the bye")
	within(t, sent, "cb's sends ended")
}

// A peer that never reads the bye, nor closes, holds the closing end no
// longer than Linger.
func TestLingerBounded(t *testing.T) {
	a := &Options{Self: newAccount(t).session(hourFromNow(), 0), Linger: 300 * time.Millisecond}
	b := &Options{Self: newAccount(t).session(hourFromNow(), 0)}
	ca, cb := tcpPair(t, a, b)
	if err := ca.Send(context.Background(), []byte("never taken")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ca.CloseWith("sync/slow", "not reading")
	if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
		t.Fatalf("closed after %v; Linger is 300ms", d)
	}
	select {
	case <-cb.Done():
		t.Fatalf("cb ended (%v) though it never read", cb.Err())
	default:
	}
}
