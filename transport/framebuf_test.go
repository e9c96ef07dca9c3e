package transport

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
)

// Large frames are received in pooled buffers that hold them until they
// are released: a frame not released is never read into again, whatever
// comes after it, over a byte stream and over a WebSocket; each frame says
// the memory it holds (Held), the whole buffer for a pooled one.
func TestFramesHeldUntilReleased(t *testing.T) {
	const max = 4 << 20
	// Message sizes: small, around where frames start to be pooled, a
	// whole pooled buffer, and larger than one.
	sizes := []int{10, len(smallBuf{}) - 1, len(smallBuf{}), len(smallBuf{}) + 1, pooledFrom - 2, pooledFrom - 1, 300_000, DefaultFrame - 1, FrameBuffer - 1, FrameBuffer, 2 << 20}
	msg := func(round, i int) []byte {
		b := make([]byte, sizes[i])
		r := rand.NewChaCha8([32]byte{byte(round), byte(i)})
		r.Read(b)
		return b
	}
	check := func(t *testing.T, send, recv *Conn) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		const rounds = 4
		go func() {
			for round := range rounds {
				for i := range sizes {
					if err := send.Send(ctx, msg(round, i)); err != nil {
						return
					}
				}
			}
		}()
		for round := range rounds {
			var held []Frame
			for range sizes {
				f, err := recv.RecvFrame(ctx)
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, f)
			}
			// Every frame of the round is held while the next ones are read
			// (the last round's by the sender's buffers): none was read
			// into again.
			for i, f := range held {
				if !bytes.Equal(f.Msg(), msg(round, i)) {
					t.Fatalf("round %d: the message of %d bytes reads other bytes while held", round, sizes[i])
				}
				n := sizes[i] + 1 // the frame, kind byte first
				switch pooled := n >= pooledFrom && n <= FrameBuffer; {
				case pooled && f.Held() != FrameBuffer:
					t.Fatalf("a frame of %d bytes in a pooled buffer holds %d bytes, want %d", n, f.Held(), FrameBuffer)
				case !pooled && (f.Held() < n || f.Held() >= 2*n):
					t.Fatalf("a frame of %d bytes of its own holds %d bytes", n, f.Held())
				}
			}
			for _, f := range held {
				f.Release()
			}
		}
	}
	t.Run("stream", func(t *testing.T) {
		a, b := newAccount(t), newAccount(t)
		ca, cb := mustPair(t, &Options{Self: a.session(hourFromNow(), 0), MaxFrame: max}, &Options{Self: b.session(hourFromNow(), 0), MaxFrame: max})
		check(t, ca, cb)
		// Recv hands over a copy at the message's size: a caller keeping
		// it does not keep a pooled buffer.
		big := msg(9, 6) // 300,000 bytes
		go ca.Send(context.Background(), big)
		m, err := cb.Recv(context.Background())
		if err != nil || !bytes.Equal(m, big) || cap(m) >= FrameBuffer {
			t.Fatalf("Recv of %d bytes: %d bytes in %d (%v)", len(big), len(m), cap(m), err)
		}
	})
	t.Run("websocket", func(t *testing.T) {
		server, client := newAccount(t), newAccount(t)
		sent := make(chan *Conn, 1)
		s, err := NewServer(&Options{Self: server.session(hourFromNow(), 0), MaxFrame: max}, nil, func(ctx context.Context, c *Conn) {
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
		c, err := Dial(context.Background(), l.URL(PathPeer), &Options{Self: client.session(hourFromNow(), 0), MaxFrame: max})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Both ways: the server's frames are not masked, the client's are.
		sc := <-sent
		check(t, sc, c)
		check(t, c, sc)
	})
}
