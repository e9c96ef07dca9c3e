package transport

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"
)

type roomConn struct {
	room string
	c    *Conn
}

// rtcMember runs a relay client that joins rooms with introductions. With
// echo, its handler echoes every message on its direct connections;
// without, it leaves them to the test.
func rtcMember(t *testing.T, ctx context.Context, url string, self Self, echo bool, rooms ...string) (*RelayClient, chan roomConn) {
	t.Helper()
	conns := make(chan roomConn, 8)
	rc, err := NewRelayClient(url, &Options{Self: self}, &RelayClientOptions{
		WebRTC: &WebRTCOptions{LoopbackOnly: true, ConnectTimeout: 20 * time.Second},
		Redial: &RedialOptions{Min: 20 * time.Millisecond, Max: 200 * time.Millisecond},
		OnConn: func(ctx context.Context, room string, c *Conn) {
			conns <- roomConn{room, c}
			if !echo {
				select {
				case <-c.Done():
				case <-ctx.Done():
				}
				return
			}
			for {
				m, err := c.Recv(ctx)
				if err != nil {
					return
				}
				if c.Send(ctx, m) != nil {
					return
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rooms {
		rc.Join(ctx, r, true)
	}
	done := make(chan struct{})
	go func() { rc.Run(ctx); close(done) }()
	t.Cleanup(func() { <-done })
	return rc, conns
}

func nextConn(t *testing.T, ch chan roomConn) roomConn {
	t.Helper()
	select {
	case rc := <-ch:
		return rc
	case <-time.After(30 * time.Second):
		t.Fatal("no direct connection")
	}
	return roomConn{}
}

// waitEcho sends msg on c and waits for the peer to echo it.
func waitEcho(t *testing.T, c *Conn, msg []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Send(ctx, msg); err != nil {
		t.Fatal(err)
	}
	got, err := c.Recv(ctx)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo of %d bytes: %d bytes, %v", len(msg), len(got), err)
	}
}

// startRelayOn serves a relay on a held port.
func startRelayOn(t *testing.T, port *heldPort) (*Relay, *Listener) {
	t.Helper()
	r, err := NewRelay(&Options{Self: Carrier(newKey(t))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(PathRelay, r)
	return r, port.serve(mux)
}

func TestWebRTCThroughRelay(t *testing.T) {
	port := holdPort(t)
	relay, l := startRelayOn(t, port)
	url := l.URL(PathRelay)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	alice, bob := newAccount(t), newAccount(t)
	sa, sb := alice.session(hourFromNow(), 0), bob.session(hourFromNow(), 0)
	_, aconns := rtcMember(t, ctx, url, sa, false, "space1")
	_, bconns := rtcMember(t, ctx, url, sb, true, "space1")
	// The test speaks for alice; bob echoes.
	ac := nextConn(t, aconns)
	bc := nextConn(t, bconns)
	if ac.room != "space1" || bc.room != "space1" {
		t.Fatalf("rooms %q %q", ac.room, bc.room)
	}
	if p := ac.c.Peer(); p.DID != sb.DID() || p.Root != bob.root.DID() || p.Binding != BindingDTLS {
		t.Fatalf("alice sees %+v", p)
	}
	if p := bc.c.Peer(); p.DID != sa.DID() || p.Root != alice.root.DID() || p.Binding != BindingDTLS {
		t.Fatalf("bob sees %+v", p)
	}
	big := bytes.Repeat([]byte("0123456789"), ac.c.MaxMessage()/10)
	probe := func(msg []byte) { waitEcho(t, ac.c, msg) }
	probe([]byte("e hello over a data channel"))
	probe(big)

	// The relay goes away: the direct connection does not need it.
	l.Close()
	relay.Close()
	probe([]byte("e the relay is gone"))

	// It comes back on the same address; the clients join again, and a
	// newcomer is introduced to both and connects directly.
	relay2, l2 := startRelayOn(t, port)
	defer func() { l2.Close(); relay2.Close() }()
	carol := newAccount(t).session(hourFromNow(), 0)
	_, cconns := rtcMember(t, ctx, url, carol, false, "space1")
	got := map[string]bool{}
	for len(got) < 2 {
		c := nextConn(t, cconns)
		got[c.c.Peer().DID] = true
	}
	if !got[sa.DID()] || !got[sb.DID()] {
		t.Fatalf("carol reached %v", got)
	}
	probe([]byte("e still direct"))
}
