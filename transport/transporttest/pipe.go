package transporttest

import (
	"errors"
	"io"
	"sync"
	"time"
)

// ErrReset is what reads and writes on a link return after it was reset.
var ErrReset = errors.New("transporttest: connection reset")

// Faults are what a link does wrong. The zero value is a clean link.
type Faults struct {
	// Delay holds every write back this long before the reader sees it.
	Delay time.Duration
	// ResetAfter resets the link once this many bytes have been written
	// into it in one direction, cutting the write that crosses it: a reset
	// in the middle of a frame. 0: never.
	ResetAfter int64
	// StallAfter stops delivering in a direction once this many bytes have
	// been read from it; the writer goes on until the buffer fills: a peer
	// that stalls in the middle of a frame. 0: never.
	StallAfter int64
	// Buffer is how many bytes may be in flight in one direction before a
	// writer blocks, as a socket's buffers do. Default 256 KiB.
	Buffer int
}

// Control changes a link's behaviour while it runs. Its methods act on both
// directions and are safe for concurrent use.
type Control struct {
	ab, ba *half
}

// Reset breaks the link now: every read and write on either end fails with
// ErrReset, and what was in flight is lost.
func (c *Control) Reset() { c.ab.reset(); c.ba.reset() }

// Stall stops delivery in both directions; writes go on until the buffers
// fill. Nothing is lost: Resume delivers it.
func (c *Control) Stall() { c.ab.setStalled(true); c.ba.setStalled(true) }

// Resume undoes Stall and StallAfter.
func (c *Control) Resume() { c.ab.setStalled(false); c.ba.setStalled(false) }

// Bytes is how many bytes were read from each direction so far.
func (c *Control) Bytes() (aToB, bToA int64) {
	return c.ab.readCount(), c.ba.readCount()
}

// Full reports, for each direction, whether its buffer is full: written
// and not yet read up to Faults.Buffer, so a writer there waits for the
// reader.
func (c *Control) Full() (aToB, bToA bool) {
	return c.ab.full(), c.ba.full()
}

func (h *half) full() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inFlight >= h.f.Buffer
}

// half is one direction of a pipe.
type half struct {
	f    Faults
	mu   sync.Mutex
	cond *sync.Cond

	chunks   []chunk
	inFlight int
	written  int64
	read     int64
	stalled  bool
	isReset  bool
	closed   bool // the writing end closed: EOF once drained
	gone     bool // the reading end closed: writes fail
	wclosed  bool // the writing end closed itself: its writes fail
	rclosed  bool // the reading end closed itself: its reads fail
}

type chunk struct {
	b  []byte
	at time.Time // when the reader may see it
}

func newHalf(f Faults) *half {
	h := &half{f: f}
	h.cond = sync.NewCond(&h.mu)
	return h
}

func (h *half) write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for n < len(p) {
		for !h.isReset && !h.gone && !h.wclosed && h.inFlight >= h.f.Buffer {
			h.cond.Wait()
		}
		switch {
		case h.isReset:
			return n, ErrReset
		case h.gone || h.wclosed:
			return n, io.ErrClosedPipe
		}
		k := min(len(p)-n, h.f.Buffer-h.inFlight)
		cut := false
		if h.f.ResetAfter > 0 && h.written+int64(k) >= h.f.ResetAfter {
			k = int(h.f.ResetAfter - h.written)
			cut = true
		}
		if k > 0 {
			b := append([]byte(nil), p[n:n+k]...)
			h.chunks = append(h.chunks, chunk{b: b, at: time.Now().Add(h.f.Delay)})
			h.inFlight += k
			h.written += int64(k)
			n += k
			if h.f.Delay > 0 {
				time.AfterFunc(h.f.Delay, h.wake)
			}
			h.cond.Broadcast()
		}
		if cut {
			h.resetLocked()
			return n, ErrReset
		}
	}
	return n, nil
}

func (h *half) wake() {
	h.mu.Lock()
	h.cond.Broadcast()
	h.mu.Unlock()
}

func (h *half) readAllowed() int64 {
	if h.stalled {
		return 0
	}
	if h.f.StallAfter > 0 {
		return h.f.StallAfter - h.read
	}
	return 1 << 62
}

func (h *half) readFrom(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		if h.isReset {
			return 0, ErrReset
		}
		if h.rclosed {
			return 0, io.ErrClosedPipe
		}
		allowed := h.readAllowed()
		if len(h.chunks) > 0 && allowed > 0 && !time.Now().Before(h.chunks[0].at) {
			c := &h.chunks[0]
			k := copy(p[:min(int64(len(p)), allowed)], c.b)
			c.b = c.b[k:]
			if len(c.b) == 0 {
				h.chunks = h.chunks[1:]
			}
			h.inFlight -= k
			h.read += int64(k)
			h.cond.Broadcast()
			return k, nil
		}
		if len(h.chunks) == 0 && h.closed {
			return 0, io.EOF
		}
		h.cond.Wait()
	}
}

func (h *half) reset() {
	h.mu.Lock()
	h.resetLocked()
	h.mu.Unlock()
}

func (h *half) resetLocked() {
	h.isReset = true
	h.chunks, h.inFlight = nil, 0
	h.cond.Broadcast()
}

func (h *half) setStalled(s bool) {
	h.mu.Lock()
	h.stalled = s
	if !s {
		h.f.StallAfter = 0
	}
	h.cond.Broadcast()
	h.mu.Unlock()
}

func (h *half) readCount() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.read
}

// closeWriter closes the writing end; the reader sees EOF unless the
// direction is stalled: a close sent into a dropped link never arrives.
func (h *half) closeWriter() {
	h.mu.Lock()
	h.wclosed = true
	if !h.stalled {
		h.closed = true
	}
	h.cond.Broadcast()
	h.mu.Unlock()
}

// closeReader closes the reading end; the writer's writes fail unless the
// direction is stalled, when they pile up until the buffer is full.
func (h *half) closeReader() {
	h.mu.Lock()
	h.rclosed = true
	if !h.stalled {
		h.gone = true
		h.chunks, h.inFlight = nil, 0
	}
	h.cond.Broadcast()
	h.mu.Unlock()
}

// end is one end of a pipe: it reads one half and writes the other.
type end struct {
	in, out *half
	once    sync.Once
}

func (e *end) Read(p []byte) (int, error)  { return e.in.readFrom(p) }
func (e *end) Write(p []byte) (int, error) { return e.out.write(p) }

// Close ends this end: the peer reads what was sent, then EOF; reads and
// writes here fail.
func (e *end) Close() error {
	e.once.Do(func() {
		e.out.closeWriter()
		e.in.closeReader()
	})
	return nil
}

// CloseWrite ends this end's sending side alone: the peer reads what was
// sent, then EOF; reads here go on.
func (e *end) CloseWrite() error {
	e.out.closeWriter()
	return nil
}

// Stream returns the two ends of an in-memory byte stream with faults f,
// and its Control. Frame it with transport.NewStreamLink.
func Stream(f *Faults) (a, b io.ReadWriteCloser, ctl *Control) {
	var ff Faults
	if f != nil {
		ff = *f
	}
	if ff.Buffer <= 0 {
		ff.Buffer = 256 << 10
	}
	ab, ba := newHalf(ff), newHalf(ff)
	return &end{in: ba, out: ab}, &end{in: ab, out: ba}, &Control{ab: ab, ba: ba}
}
