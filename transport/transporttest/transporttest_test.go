package transporttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/minca-go/minca/transport"
)

// opts are a connection's options with the default timers: a test that
// is not about timers never sees one fire, however slow a loaded machine
// makes its frames.
func opts(t *testing.T) *transport.Options {
	return &transport.Options{Self: Session(t)}
}

// shortTimers are options whose idle and write timers fire soon, for the
// tests of a link that stalls or drops, which end by them whatever the
// machine's speed.
func shortTimers(t *testing.T) *transport.Options {
	return &transport.Options{Self: Session(t), IdleTimeout: 500 * time.Millisecond, KeepAlive: 100 * time.Millisecond, WriteTimeout: 500 * time.Millisecond}
}

func TestCleanLink(t *testing.T) {
	a, b, ctl := Pair(t, opts(t), opts(t), nil)
	msg := bytes.Repeat([]byte("v"), a.MaxMessage())
	go a.Send(context.Background(), msg)
	got, err := b.Recv(context.Background())
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	if ab, _ := ctl.Bytes(); ab < int64(len(msg)) {
		t.Fatalf("counted %d bytes", ab)
	}
}

func TestDelay(t *testing.T) {
	a, b, _ := Pair(t, opts(t), opts(t), &Faults{Delay: 50 * time.Millisecond})
	start := time.Now()
	go a.Send(context.Background(), []byte("late"))
	if _, err := b.Recv(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("arrived after %v; the delay is 50ms", d)
	}
}

// A reset inside a frame: the receiver never sees part of the message,
// and both ends learn the link broke.
func TestResetMidFrame(t *testing.T) {
	// The handshake takes about 1.5 KiB each way; the reset falls inside
	// the 64 KiB frame after it.
	a2, b2, _ := Pair(t, opts(t), opts(t), &Faults{ResetAfter: 4096})
	errc := make(chan error, 1)
	go func() { errc <- a2.Send(context.Background(), bytes.Repeat([]byte("x"), 64<<10)) }()
	got, err := b2.Recv(context.Background())
	if err == nil {
		t.Fatalf("received %d bytes of a frame cut by a reset", len(got))
	}
	if transport.Code(err) != transport.CodeBroken {
		t.Fatalf("receiver: %v", err)
	}
	if err := <-errc; transport.Code(err) != transport.CodeBroken {
		t.Fatalf("sender: %v", err)
	}
}

func TestControlReset(t *testing.T) {
	a, b, ctl := Pair(t, opts(t), opts(t), nil)
	ctl.Reset()
	if _, err := b.Recv(context.Background()); transport.Code(err) != transport.CodeBroken {
		t.Fatalf("after Reset: %v", err)
	}
	<-a.Done()
	if transport.Code(a.Err()) != transport.CodeBroken {
		t.Fatalf("the other end: %v", a.Err())
	}
}

// A peer that stalls in the middle of a frame: the receiver ends it at
// IdleTimeout, the sender at WriteTimeout once the buffer is full. The
// sender's WriteTimeout is the longer, so that the receiver's idle timer
// is what ends the link: with both at 500 ms the sender sometimes gave up
// first, and its close failed the receiver's keepalives (broken) before
// its idle timer fired.
func TestStallMidFrame(t *testing.T) {
	sender := shortTimers(t)
	sender.WriteTimeout = 1500 * time.Millisecond
	a, b, _ := Pair(t, sender, shortTimers(t), &Faults{StallAfter: 8 << 10, Buffer: 64 << 10})
	errc := make(chan error, 1)
	go func() { errc <- a.Send(context.Background(), bytes.Repeat([]byte("s"), 512<<10)) }()
	if _, err := b.Recv(context.Background()); transport.Code(err) != transport.CodeIdle {
		t.Fatalf("receiver: %v", err)
	}
	// The sender hears the receiver's bye if that direction still flows,
	// or finds the link stalled or broken.
	switch err := <-errc; transport.Code(err) {
	case transport.CodeIdle, transport.CodeStalled, transport.CodeBroken:
	default:
		t.Fatalf("sender: %v", err)
	}
}

// A dropped link (nothing passes either way, no reset) ends both sides
// by their idle timers.
func TestDroppedLink(t *testing.T) {
	a, b, ctl := Pair(t, shortTimers(t), shortTimers(t), nil)
	ctl.Stall()
	for _, c := range []*transport.Conn{a, b} {
		select {
		case <-c.Done():
		case <-time.After(time.Minute):
			t.Fatal("a dropped link still up a minute after its idle timeout")
		}
		if transport.Code(c.Err()) != transport.CodeIdle {
			t.Fatalf("ended with %v", c.Err())
		}
	}
}

func TestStallAndResume(t *testing.T) {
	a, b, ctl := Pair(t, opts(t), opts(t), nil)
	ctl.Stall()
	go a.Send(context.Background(), []byte("held back"))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := b.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a stalled link delivered: %v", err)
	}
	ctl.Resume()
	if m, err := b.Recv(context.Background()); err != nil || string(m) != "held back" {
		t.Fatalf("after Resume: %q %v", m, err)
	}
}

// A session over the network redials after every link is reset, and dials
// fail while the peer is down.
func TestNetworkRedial(t *testing.T) {
	n := NewNetwork(nil)
	served := make(chan *transport.Conn, 8)
	stop := n.Listen("b", opts(t), func(ctx context.Context, c *transport.Conn) {
		served <- c
		select {
		case <-c.Done():
		case <-ctx.Done():
		}
	})
	defer stop()
	ao := opts(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dialled := make(chan *transport.Conn, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		transport.Redial(ctx, func(ctx context.Context) (*transport.Conn, error) { return n.Dial(ctx, "b", ao) },
			func(ctx context.Context, c *transport.Conn) {
				dialled <- c
				select {
				case <-c.Done():
				case <-ctx.Done():
				}
			}, &transport.RedialOptions{Min: 10 * time.Millisecond, Max: 50 * time.Millisecond})
	}()
	<-dialled
	<-served
	n.ResetAll()
	select {
	case c := <-dialled:
		if c.Err() != nil {
			t.Fatalf("the new connection: %v", c.Err())
		}
	case <-time.After(time.Minute):
		t.Fatal("no new connection after a reset")
	}
	n.SetDown("b", true)
	if _, err := n.Dial(context.Background(), "b", ao); !errors.Is(err, transport.ErrUnreachable) {
		t.Fatalf("dialling a peer that is down: %v", err)
	}
	cancel()
	<-done
}

// A relay client finds the relay again after it restarts, and forwards
// flow again.
func TestRelayRestart(t *testing.T) {
	rs := StartRelay(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := func() *transport.RelayClient {
		rc, err := transport.NewRelayClient(rs.URL(), &transport.Options{Self: transport.Carrier(NewKey(t))},
			&transport.RelayClientOptions{Redial: &transport.RedialOptions{Min: 10 * time.Millisecond, Max: 100 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		rc.Join(ctx, "room", false)
		go rc.Run(ctx)
		return rc
	}
	a, b := client(), client()
	waitConnected := func(rc *transport.RelayClient) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !rc.Connected() && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if !rc.Connected() {
			t.Fatal("not connected to the relay")
		}
	}
	// forwardUntil sends until b hears it: joins may still be on their way.
	forwardUntil := func(payload string) {
		t.Helper()
		for i := 0; i < 200; i++ {
			a.Forward(ctx, "room", "", json.RawMessage(payload))
			select {
			case f := <-b.Forwards():
				if string(f.Payload) == payload {
					return
				}
			case <-time.After(25 * time.Millisecond):
			}
		}
		t.Fatalf("%s never arrived", payload)
	}
	waitConnected(a)
	waitConnected(b)
	forwardUntil(`"before"`)
	if err := rs.Restart(); err != nil {
		t.Fatal(err)
	}
	waitConnected(a)
	waitConnected(b)
	forwardUntil(`"after"`)
}
