package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Conn is a proven connection to one peer: ordered, reliable and framed,
// opened by the who exchange ([Handshake]). The session layer sends and
// receives messages on it ([Conn.Send], [Conn.Recv]); this package never
// reads them.
//
// A Conn keeps two goroutines: one reads frames from the link and hands
// data to Recv one at a time, so at most one frame waits in memory and a
// slow reader slows the peer through the link's own flow control; one
// sends a ping when this end has been silent for KeepAlive. Send and Recv
// are safe for concurrent use. A Conn ends once, with a reason ([Conn.Err]).
type Conn struct {
	link    Link
	o       *resolved
	peer    Peer
	maxSend int
	addr    string // the source address, as a Server counts it; "" otherwise

	in   chan Frame    // data frames from the reader; unbuffered
	wsem chan struct{} // the write lock, taken with a context
	done chan struct{}
	once sync.Once
	err  *Error
	wg   sync.WaitGroup
	// ended is closed once end has said the bye and chosen how the link
	// closes; linger is then whether the reader closes it, after the
	// peer has closed its side or Linger has passed.
	ended  chan struct{}
	linger *time.Timer

	lastSend              atomic.Int64 // Unix ns
	sentFrames, sentBytes atomic.Int64
	recvFrames, recvBytes atomic.Int64
}

func newConn(link Link, o *resolved, peer Peer, maxSend int) *Conn {
	c := &Conn{
		link: link, o: o, peer: peer, maxSend: maxSend,
		in:    make(chan Frame),
		wsem:  make(chan struct{}, 1),
		done:  make(chan struct{}),
		ended: make(chan struct{}),
	}
	c.lastSend.Store(c.o.clock.Now().UnixNano())
	c.wg.Add(2)
	go c.readLoop()
	go c.keepAlive()
	return c
}

// Peer is who the other end proved to be.
func (c *Conn) Peer() Peer { return c.peer }

// Addr is the source address the connection came from, as [AddrOf]
// writes it, when a [Server] accepted it; "" for one dialled, or over
// WebRTC or a pipe.
func (c *Conn) Addr() string { return c.addr }

// MaxMessage is the largest message Send takes: the peer's frame limit,
// less the kind byte.
func (c *Conn) MaxMessage() int { return c.maxSend - 1 }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended (an *Error), or nil while it lasts.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Stats counts what a connection carried, data frames and control frames
// alike; bytes are frame bytes (kind byte included), not link overhead.
type Stats struct {
	FramesSent, BytesSent         int64
	FramesReceived, BytesReceived int64
}

// Stats returns the counts so far.
func (c *Conn) Stats() Stats {
	return Stats{
		FramesSent: c.sentFrames.Load(), BytesSent: c.sentBytes.Load(),
		FramesReceived: c.recvFrames.Load(), BytesReceived: c.recvBytes.Load(),
	}
}

// Send sends msg as one data frame. A msg longer than MaxMessage is
// refused (frame/too-large) and the connection goes on. A ctx that ends
// while waiting for an earlier Send returns ctx.Err() and changes
// nothing; a frame begun is written whole whatever becomes of ctx, since
// half a frame cannot be taken back (the caller that gave up must not end
// the connection with it). A frame that cannot be written within
// WriteTimeout ends it with conn/stalled.
func (c *Conn) Send(ctx context.Context, msg []byte) error {
	if len(msg) > c.MaxMessage() {
		return errorf(CodeFrameTooLarge, "a message of %d bytes; the peer takes at most %d", len(msg), c.MaxMessage())
	}
	f := make([]byte, 1+len(msg))
	f[0] = kindData
	copy(f[1:], msg)
	return c.write(ctx, f)
}

// SendFrame is Send for a message built one byte in: it sends f[1:],
// writing the frame's kind into f[0], and saves Send's copy of a large
// message. f is the caller's again when SendFrame returns.
func (c *Conn) SendFrame(ctx context.Context, f []byte) error {
	if len(f) < 1 || len(f)-1 > c.MaxMessage() {
		return errorf(CodeFrameTooLarge, "a message of %d bytes; the peer takes at most %d", len(f)-1, c.MaxMessage())
	}
	f[0] = kindData
	return c.write(ctx, f)
}

func (c *Conn) write(ctx context.Context, f []byte) error {
	if err := ctx.Err(); err != nil {
		return err // not begun: the connection goes on
	}
	select {
	case c.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return c.err
	}
	defer func() { <-c.wsem }()
	return c.writeLocked(ctx, f)
}

// writeLocked writes f holding the write lock.
func (c *Conn) writeLocked(ctx context.Context, f []byte) error {
	select {
	case <-c.done:
		return c.err
	default:
	}
	// The reason is set before the link is closed under the write, so the
	// reader, which then fails too, does not name it.
	t := c.o.clock.AfterFunc(c.o.WriteTimeout, func() {
		c.end(errorf(CodeStalled, "a frame of %d bytes was not taken within %v: the peer does not read", len(f), c.o.WriteTimeout))
	})
	err := c.link.WriteFrame(context.Background(), f)
	t.Stop()
	if err != nil {
		c.fail(err)
		return c.err
	}
	c.lastSend.Store(c.o.clock.Now().UnixNano())
	c.sentFrames.Add(1)
	c.sentBytes.Add(int64(len(f)))
	return nil
}

// Recv returns the next message the peer sent, in order. The slice is the
// caller's. When the connection has ended it returns the reason, an
// *Error; a ctx that ends returns ctx.Err() and changes nothing.
func (c *Conn) Recv(ctx context.Context) ([]byte, error) {
	f, err := c.RecvFrame(ctx)
	if f.buf != nil {
		// Copied out at its size: a caller keeping it holds its bytes,
		// not a whole pooled buffer.
		m := bytes.Clone(f.Msg())
		f.Release()
		return m, err
	}
	return f.Msg(), err
}

// RecvFrame is Recv for a receiver that gives large messages' buffers
// back ([Frame.Release]) once it is done with them, and counts the
// memory each holds ([Frame.Held]).
func (c *Conn) RecvFrame(ctx context.Context) (Frame, error) {
	select {
	case f := <-c.in:
		return f, nil
	case <-c.done:
		return Frame{}, c.err
	case <-ctx.Done():
		return Frame{}, ctx.Err()
	}
}

// Close ends the connection with conn/closed, telling the peer, and
// waits for its goroutines.
func (c *Conn) Close() error {
	c.end(errorf(CodeClosed, "closed on purpose"))
	c.wg.Wait()
	return nil
}

// CloseWith ends the connection with the session layer's own reason,
// which the peer sees in its bye: code is family/name, lower case, at most
// 64 bytes ("sync/malformed"); message at most 256 bytes.
func (c *Conn) CloseWith(code, message string) error {
	if !ValidCode(code) {
		return fmt.Errorf("minca/transport: %q is not a reason code (family/name, lower case, at most 64 bytes)", code)
	}
	c.end(&Error{Code: code, Message: truncate(message, maxByeMessage)})
	c.wg.Wait()
	return nil
}

// fail ends the connection after a link error: a reason of ours, or the
// link breaking.
func (c *Conn) fail(err error) {
	var e *Error
	if errors.As(err, &e) {
		c.end(e)
		return
	}
	c.end(errorf(CodeBroken, "%v", err))
}

// end ends the connection once: records why, tells the peer in a bye
// (unless the peer said it, or the link broke) and closes the link. After
// a bye, a link that can close its sending side alone does, and the
// reader goes on reading (and dropping) what the peer still sends until
// the peer closes too, or Linger passes: the peer is then reading the bye
// rather than finding its own writes refused, or its receive buffer
// discarded by a reset, before it got there.
func (c *Conn) end(e *Error) {
	c.once.Do(func() {
		defer close(c.ended)
		c.err = e
		close(c.done)
		said := false
		if !e.Remote && e.Code != CodeBroken && e.Code != CodeStalled {
			said = c.sendBye(e)
		}
		if a, ok := c.link.(aborter); ok && !said && !e.Remote {
			// A peer that could not be told will not close politely either.
			a.Abort()
			return
		}
		if said && closeWrite(c.link) {
			c.linger = time.AfterFunc(c.o.Linger, func() { c.link.Close() })
			return
		}
		c.link.Close()
	})
}

// sendBye writes a bye if the write lock is free within a second, and
// reports whether it went out; a peer that does not read does not get one.
func (c *Conn) sendBye(e *Error) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	select {
	case c.wsem <- struct{}{}:
		defer func() { <-c.wsem }()
		return c.link.WriteFrame(ctx, encodeControl(&control{Type: typeBye, Code: e.Code, Message: truncate(e.Message, maxByeMessage)})) == nil
	case <-ctx.Done():
		return false
	}
}

// closeWrite closes the sending side of link alone, if it can.
func closeWrite(link Link) bool {
	hc, ok := link.(halfCloser)
	return ok && hc.CloseWrite() == nil
}

// halfCloser is a Link that can end its sending side and go on reading.
type halfCloser interface {
	CloseWrite() error
}

// aborter is a Link with a quicker, impolite Close, for a peer that is
// not reading.
type aborter interface {
	Abort() error
}

func (c *Conn) readLoop() {
	defer c.wg.Done()
	defer c.drain()
	for {
		t := c.o.clock.AfterFunc(c.o.IdleTimeout, func() {
			c.end(errorf(CodeIdle, "no whole frame arrived within %v", c.o.IdleTimeout))
		})
		f, err := readFrame(c.link, context.Background(), c.o.MaxFrame, c.o.PlaceData)
		t.Stop()
		if err != nil {
			c.fail(err) // a no-op when the connection ended first
			return
		}
		c.recvFrames.Add(1)
		c.recvBytes.Add(int64(len(f.b)))
		kind, err := checkKind(f.b)
		if err != nil {
			f.Release()
			c.end(err.(*Error))
			return
		}
		if kind == kindData {
			select {
			case c.in <- f:
			case <-c.done:
				f.Release()
				return
			}
			continue
		}
		m, err := decodeControl(f.Msg())
		f.Release()
		if err != nil {
			c.end(malformed(err).(*Error))
			return
		}
		switch m.Type {
		case typePing:
		case typeBye:
			c.end(&Error{Code: m.Code, Message: m.Message, Remote: true})
			return
		default:
			c.end(errorf(CodeFrameOrder, "a %s message after who", m.Type))
			return
		}
	}
}

// drain closes the link once the connection has ended: at once, or, when
// end chose to linger, after reading what the peer still sends until it
// closes its side or Linger passes.
func (c *Conn) drain() {
	<-c.ended
	if c.linger == nil {
		return
	}
	defer c.linger.Stop()
	for {
		f, err := readFrame(c.link, context.Background(), c.o.MaxFrame, c.o.PlaceData)
		if err != nil {
			c.link.Close()
			return
		}
		f.Release()
	}
}

func (c *Conn) keepAlive() {
	defer c.wg.Done()
	tick := make(chan struct{}, 1) // each timer fires once, and is waited for before the next
	ping := encodeControl(&control{Type: typePing})
	for {
		t := c.o.clock.AfterFunc(c.o.KeepAlive/2, func() { tick <- struct{}{} })
		select {
		case <-c.done:
			t.Stop()
			return
		case <-tick:
		}
		if c.o.clock.Now().Sub(time.Unix(0, c.lastSend.Load())) < c.o.KeepAlive {
			continue
		}
		select {
		case c.wsem <- struct{}{}:
			c.writeLocked(context.Background(), ping)
			<-c.wsem
		default: // a send in progress says enough
		}
	}
}
