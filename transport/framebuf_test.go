package transport

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"
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
		// Both ways: the server's frames are not masked, the client's are.
		sc, c := webSocketPair(t, Options{MaxFrame: max}, Options{MaxFrame: max})
		check(t, sc, c)
		check(t, c, sc)
	})
}

// A data frame is placed in its pooled buffer so the bytes PlaceData
// names start on a DataAlign boundary of memory, every byte as sent; one
// that no longer fits what is left of the buffer, one too small to be
// pooled, and one PlaceData names no bytes of are read as before. Here
// a message's first byte says where its data starts.
func TestPlacedDataOnABlockBoundary(t *testing.T) {
	place := func(msg []byte) int {
		if len(msg) == 0 || msg[0] == 0xff {
			return -1
		}
		return int(msg[0])
	}
	type tc struct {
		head, size int
		aligned    bool // its data is to start on a boundary
	}
	cases := []tc{
		{1, DefaultFrame - DataAlign + 1, true},
		{40, DefaultFrame - DataAlign + 40, true},
		{54, DefaultFrame - DataAlign + 54, true},
		{200, 600_000, true},
		{40, DefaultFrame - 1, true},     // the most a 1 MiB limit lets a peer send
		{40, FrameBuffer - 10, false},    // placed, it would pass the buffer's end: a buffer of its own
		{40, pooledFrom / 2, false},      // too small to be pooled: copied out at its size
		{0xff, DefaultFrame - 1, false},  // no bytes named: at the buffer's start
		{250, 300, false},                // small: copied out at its size
		{120, DefaultFrame - 4096, true}, // a chunk shorter than the most
	}
	msg := func(i int, c tc) []byte {
		b := make([]byte, c.size)
		rand.NewChaCha8([32]byte{byte(i)}).Read(b)
		b[0] = byte(c.head)
		return b
	}
	sc, c := webSocketPair(t, Options{}, Options{PlaceData: place, MaxFrame: 2 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		for i, m := range cases {
			if sc.Send(ctx, msg(i, m)) != nil {
				return
			}
		}
	}()
	var held []Frame
	for i, m := range cases {
		f, err := c.RecvFrame(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, f)
		got := f.Msg()
		if !bytes.Equal(got, msg(i, m)) {
			t.Fatalf("case %d (head %d, %d bytes): the message reads other bytes", i, m.head, m.size)
		}
		at := uintptr(unsafe.Pointer(&got[min(m.head, len(got)-1)]))
		if m.aligned && (at%DataAlign != 0 || f.Held() != FrameBuffer) {
			t.Fatalf("case %d (head %d, %d bytes): its data at %#x (mod %d = %d), in a buffer of %d; want on a boundary, in a pooled buffer", i, m.head, m.size, at, DataAlign, at%DataAlign, f.Held())
		}
	}
	for _, f := range held {
		f.Release()
	}
}
