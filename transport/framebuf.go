package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"unsafe"
)

// Frame is a data message as it was received ([Conn.RecvFrame]), in the
// buffer it was read into. A large frame is read into a buffer of the
// frame pool, and the receiver that is done with it gives the buffer back
// ([Frame.Release]) to be read into again: a stream of file chunks is then
// received with no copy out of the read buffer and no allocation per
// chunk. A frame never released is left to the garbage collector.
type Frame struct {
	b   []byte    // the frame, kind byte first
	buf *frameBuf // the pooled buffer b lies in; nil when b is its own
}

// Msg is the message: the frame's bytes past its kind byte. They are the
// receiver's until it calls Release.
func (f Frame) Msg() []byte {
	if len(f.b) == 0 {
		return nil
	}
	return f.b[1:]
}

// Held is the bytes of memory the frame holds until released: the whole
// pooled buffer, whatever part of it the frame fills. A receiver bounding
// what it holds in bytes counts this, not the message's length.
func (f Frame) Held() int {
	if f.buf != nil {
		return len(f.buf)
	}
	return cap(f.b)
}

// Release gives the frame's buffer back to be read into again. Neither
// the frame nor its message may be used after, and a frame is released
// at most once.
func (f Frame) Release() {
	if f.buf != nil {
		framePool.Put(f.buf)
	}
}

// FrameBuffer is the size of the buffers large frames are read into,
// what [Frame.Held] is for each of them: a frame of DefaultFrame bytes,
// or one of DefaultFrame−DataAlign bytes whose data [Options.PlaceData]
// puts on a DataAlign boundary (up to DataAlign−1 bytes in). A larger frame is read into a
// buffer of its own.
const FrameBuffer = DefaultFrame + 4<<10

// pooledFrom is the least a frame is to be kept in a pooled buffer; a
// smaller one is copied out at its size, and the buffer read into next.
// A frame holds its buffer whole, so a frame kept pooled holds at most 4×
// its bytes.
const pooledFrom = FrameBuffer / 4

type frameBuf [FrameBuffer]byte

// framePool holds the buffers frames are read into: as many as were
// received and not yet released at once, which a receiver that counts
// Held bounds; the garbage collector empties it of those unused.
var framePool = sync.Pool{New: func() any { return new(frameBuf) }}

// frameReader is a Link that reads frames into the frame pool's buffers.
type frameReader interface {
	readFrame(ctx context.Context, max int, place func([]byte) int) (Frame, error)
}

// readFrame reads a frame from link, into a pooled buffer when the link
// can, placed there by place ([Options.PlaceData]; nil: at its start).
func readFrame(link Link, ctx context.Context, max int, place func([]byte) int) (Frame, error) {
	if fr, ok := link.(frameReader); ok {
		return fr.readFrame(ctx, max, place)
	}
	b, err := link.ReadFrame(ctx, max)
	return Frame{b: b}, err
}

// readPooled reads one frame from r, which ends with the frame (io.EOF),
// of at most max bytes; a longer one is *Error frame/too-large, read no
// further than max+1 bytes. The frame's first bytes are read into a
// small buffer, and a frame that goes on past them into a buffer of the
// frame pool, so that small frames, the most of them, never take a large
// buffer; a frame of less than pooledFrom is then copied out at its size
// and the buffers go back at once. Buffers are taken once the frame has
// begun, so an idle link holds none. A data frame is placed in its
// buffer so the bytes place names start on a DataAlign boundary (place
// nil or -1: at the buffer's start); one that then does not fit what is
// left of the buffer is read into a buffer of its own.
func readPooled(r io.Reader, max int, place func([]byte) int) (Frame, error) {
	sb := smallPool.Get().(*smallBuf)
	defer smallPool.Put(sb)
	head := sb[:min(len(sb), max+1)]
	n, err := io.ReadFull(r, head)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return Frame{b: bytes.Clone(head[:n])}, nil
	case err != nil:
		return Frame{}, err
	case n > max:
		return Frame{}, errorf(CodeFrameTooLarge, "a frame of more than %d bytes; the limit is %d", max, max)
	}
	if max < pooledFrom {
		// A link whose frames are never large ones (a relay's) reads
		// on at the frame's size.
		return readRest(head, r, max)
	}
	fb := framePool.Get().(*frameBuf)
	o := 0
	if place != nil && head[0] == kindData {
		if at := place(head[1:n]); at >= 0 && at < n-1 {
			o = alignGap(fb, 1+at)
		}
	}
	copy(fb[o:], head)
	f, err := readInto(fb, o, n, r, max)
	if f.buf == nil {
		framePool.Put(fb)
	}
	return f, err
}

// smallBuf is where a frame's first bytes are read.
type smallBuf [16 << 10]byte

var smallPool = sync.Pool{New: func() any { return new(smallBuf) }}

// alignGap is how far into fb a frame is to start for its byte at to lie
// on a DataAlign boundary of memory.
func alignGap(fb *frameBuf, at int) int {
	addr := uintptr(unsafe.Pointer(&fb[0])) + uintptr(at)
	return int((DataAlign - addr%DataAlign) % DataAlign)
}

// readInto reads the rest of a frame whose first n bytes are in fb from
// o on.
func readInto(fb *frameBuf, o, n int, r io.Reader, max int) (Frame, error) {
	buf := fb[o:min(len(fb), o+max+1)]
	k, err := io.ReadFull(r, buf[n:])
	n += k
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		// The frame ended within the buffer.
	case err != nil:
		return Frame{}, err
	case n > max:
		return Frame{}, errorf(CodeFrameTooLarge, "a frame of more than %d bytes; the limit is %d", max, max)
	default:
		// The buffer is full: the frame ends with it, or it is longer
		// than what is left of the pool's buffer (a peer whose limit is
		// past DefaultFrame, or a frame placed too far in) and is read on
		// at its size.
		var one [1]byte
		k, err := r.Read(one[:])
		for k == 0 && err == nil {
			k, err = r.Read(one[:])
		}
		if k == 0 && errors.Is(err, io.EOF) {
			break
		}
		if k == 0 {
			return Frame{}, err
		}
		return readRest(append(buf[:n:n], one[0]), r, max)
	}
	if n < pooledFrom {
		return Frame{b: bytes.Clone(buf[:n])}, nil
	}
	return Frame{b: buf[:n], buf: fb}, nil
}

// readRest reads the rest of a frame whose first bytes are head into a
// buffer of its own, growing it, and hands it over at the frame's size.
func readRest(head []byte, r io.Reader, max int) (Frame, error) {
	var b bytes.Buffer
	b.Grow(2 * len(head))
	b.Write(head)
	if _, err := b.ReadFrom(io.LimitReader(r, int64(max+1-len(head)))); err != nil {
		return Frame{}, err
	}
	if b.Len() > max {
		return Frame{}, errorf(CodeFrameTooLarge, "a frame of more than %d bytes; the limit is %d", max, max)
	}
	if b.Cap() > b.Len()+b.Len()/8 {
		return Frame{b: bytes.Clone(b.Bytes())}, nil
	}
	return Frame{b: b.Bytes()}, nil
}
