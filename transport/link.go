package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync"
)

// Link carries frames in order, reliably, between two ends, before anyone
// is proven: a WebSocket, a WebRTC data channel, or a byte stream with
// length prefixes ([NewStreamLink]). [Handshake] turns a Link into a
// [*Conn]. Tests wrap Links to inject faults (transport/transporttest).
//
// ReadFrame and WriteFrame may be called at once from two goroutines, but
// each by one goroutine at a time. A context that ends during either may
// leave the Link unusable (a frame half read or half written); the caller
// then closes it.
type Link interface {
	// ReadFrame returns the next whole frame. A frame longer than max is
	// refused with *Error frame/too-large, read no further than its
	// length; the Link is then unusable.
	ReadFrame(ctx context.Context, max int) ([]byte, error)
	// WriteFrame sends one frame whole.
	WriteFrame(ctx context.Context, frame []byte) error
	// Close ends the link; blocked reads and writes return.
	Close() error
}

// streamLink frames a byte stream: each frame is its length as a 4-byte
// big-endian unsigned integer, then the frame.
type streamLink struct {
	rwc       io.ReadWriteCloser
	wsem      chan struct{} // the write lock, taken with a context
	closeOnce sync.Once
	closeErr  error
	hdr       [4]byte
}

// NewStreamLink frames an ordered, reliable byte stream (docs/sync.md,
// "Frames on a byte stream"): each frame travels as its length, a 4-byte
// big-endian unsigned integer, and then its bytes. A context that ends
// during a read or write closes rwc. WebRTC data channels use it; so do
// tests over in-memory pipes.
func NewStreamLink(rwc io.ReadWriteCloser) Link {
	return &streamLink{rwc: rwc, wsem: make(chan struct{}, 1)}
}

// watch closes the stream when ctx ends before stop is called, so a
// blocked Read or Write returns.
func (l *streamLink) watch(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, func() { l.Close() })
}

func (l *streamLink) ReadFrame(ctx context.Context, max int) ([]byte, error) {
	f, err := l.readFrame(ctx, max, nil)
	return f.b, err
}

// readFrame reads a frame whose length says it is a large one into a
// pooled buffer (framebuf.go).
func (l *streamLink) readFrame(ctx context.Context, max int, _ func([]byte) int) (Frame, error) {
	stop := l.watch(ctx)
	defer stop()
	if _, err := io.ReadFull(l.rwc, l.hdr[:]); err != nil {
		return Frame{}, l.ioErr(ctx, err)
	}
	n := binary.BigEndian.Uint32(l.hdr[:])
	if n == 0 {
		return Frame{}, errorf(CodeFrameMalformed, "a frame of length 0: every frame has a kind byte")
	}
	if uint64(n) > uint64(max) {
		return Frame{}, errorf(CodeFrameTooLarge, "a frame of %d bytes; the limit is %d", n, max)
	}
	var f Frame
	if n >= pooledFrom && n <= FrameBuffer {
		f.buf = framePool.Get().(*frameBuf)
		f.b = f.buf[:n]
	} else {
		f.b = make([]byte, n)
	}
	if _, err := io.ReadFull(l.rwc, f.b); err != nil {
		f.Release()
		return Frame{}, l.ioErr(ctx, err)
	}
	return f, nil
}

func (l *streamLink) WriteFrame(ctx context.Context, frame []byte) error {
	select {
	case l.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.wsem }()
	stop := l.watch(ctx)
	defer stop()
	buf := make([]byte, 4+len(frame))
	binary.BigEndian.PutUint32(buf, uint32(len(frame)))
	copy(buf[4:], frame)
	if _, err := l.rwc.Write(buf); err != nil {
		return l.ioErr(ctx, err)
	}
	return nil
}

func (l *streamLink) ioErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errorf(CodeBroken, "the stream ended inside a frame")
	}
	return err
}

// CloseWrite ends the sending side, when the stream can (a TCP
// connection, an in-memory pipe): the peer reads what was sent, then the
// end; reads here go on.
func (l *streamLink) CloseWrite() error {
	cw, ok := l.rwc.(interface{ CloseWrite() error })
	if !ok {
		return errors.ErrUnsupported
	}
	l.wsem <- struct{}{}
	defer func() { <-l.wsem }()
	return cw.CloseWrite()
}

func (l *streamLink) Close() error {
	l.closeOnce.Do(func() { l.closeErr = l.rwc.Close() })
	return l.closeErr
}
