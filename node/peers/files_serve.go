package peers

import (
	"context"
	"io"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/transport"
)

// Serving files to the peer (docs/sync.md §7.7).

// fileWant serves a FILE-WANT when the peer may have the file: a version
// of this session's space and scope names it with that size, and the
// store holds it. Otherwise FILE-STOP file/not-held, the same for every
// reason. A small transfer waits its turn in the session's queue, the
// file unopened, and is served by one of at most smallServers goroutines
// with the others.
func (s *session) fileWant(f *fileMsg) *endError {
	s.files.mu.Lock()
	if s.files.serving[f.file] != nil {
		s.files.mu.Unlock()
		return ended(CodeUnexpected, "FILE-WANT for a file in flight")
	}
	s.files.mu.Unlock()
	small := isSmall(int64(f.size), int64(f.offset), int64(f.credit))
	most := MaxFileTransfers
	if small {
		most = MaxSmallTransfers
	}
	cf := &s.c.files
	cf.mu.Lock()
	if cf.serving[b2i(small)] >= most {
		cf.mu.Unlock()
		return ended(CodeFileFlood, "a FILE-WANT with %d transfers of its kind in flight; at most %d", most, most)
	}
	cf.serving[b2i(small)]++
	cf.mu.Unlock()
	x := &serveXfer{file: f.file, version: f.version, small: small, size: int64(f.size), next: int64(f.offset), credit: int64(f.credit),
		more: make(chan struct{}, 1), stop: make(chan struct{}), startedAt: time.Now()}
	s.files.mu.Lock()
	s.files.serving[f.file] = x
	if small {
		s.files.small = append(s.files.small, x)
		run := s.files.smallRun < smallServers
		if run {
			s.files.smallRun++
		}
		s.files.mu.Unlock()
		if run {
			go s.serveSmall()
		}
		return nil
	}
	s.files.mu.Unlock()
	r, ok := s.mayServe(x)
	if !ok {
		s.notServed(x)
		return nil
	}
	go s.serveFile(x, r)
	return nil
}

// smallServers is how many goroutines of a session serve its small
// transfers at once, each taking the next in the order asked: each file
// costs the holder a version to read and a file to open, and one at a
// time would keep the asker's slots waiting on them. Each holds at most
// one small file's chunk (SmallFile bytes) and one open file.
const smallServers = 8

// serveSmall serves the session's small transfers in order until none
// waits.
func (s *session) serveSmall() {
	for {
		s.files.mu.Lock()
		if s.ctx.Err() != nil {
			// The session ended: what waits is never served.
			left := s.files.small
			s.files.small = nil
			s.files.smallRun--
			s.files.mu.Unlock()
			for _, x := range left {
				s.endServe(x)
			}
			return
		}
		if len(s.files.small) == 0 {
			s.files.smallRun--
			s.files.mu.Unlock()
			return
		}
		x := s.files.small[0]
		s.files.small[0] = nil
		s.files.small = s.files.small[1:]
		s.files.mu.Unlock()
		r, ok := s.mayServe(x)
		if !ok {
			s.notServed(x)
			continue
		}
		s.serveFile(x, r)
	}
}

// notServed answers a FILE-WANT that is not served.
func (s *session) notServed(x *serveXfer) {
	s.c.p.log.Debug("file not served", "file", x.file.String(), "space", s.space, "sid", s.sid, "version", x.version.String())
	s.endServe(x)
	s.post(encodeFileStop(s.sid, x.file, codeFileNotHeld, fileNotHeldText))
}

// endServe forgets a transfer this end served.
func (s *session) endServe(x *serveXfer) {
	s.files.mu.Lock()
	delete(s.files.serving, x.file)
	s.files.mu.Unlock()
	s.c.files.mu.Lock()
	s.c.files.serving[b2i(x.small)]--
	s.c.files.mu.Unlock()
}

// mayServe opens the file a FILE-WANT asks for when it may be served.
func (s *session) mayServe(f *serveXfer) (engine.FileReader, bool) {
	st := s.c.host.Store()
	v, err := st.Version(s.ctx, f.version)
	if err != nil || v.Space != s.space || !s.inScope(v.Collection) {
		return nil, false
	}
	named := false
	for _, ref := range v.Files {
		named = named || (ref.Hash == f.file && ref.Size == f.size)
	}
	if !named {
		return nil, false
	}
	r, err := st.OpenFile(s.ctx, f.file)
	if err != nil {
		return nil, false
	}
	if r.Size() != f.size {
		r.Close()
		return nil, false
	}
	return r, true
}

// serveFile sends a file from where it was asked, in order, within the
// credit granted and the connection's SendQueue, until its last byte, the
// asker's stop, or the session's end. The next chunk is read while the
// last is sent (readAhead).
func (s *session) serveFile(x *serveXfer, r engine.FileReader) {
	defer func() {
		r.Close()
		s.endServe(x)
	}()
	chunk := int64(max(1, min(s.c.c.MaxMessage()-64, maxFileDataChunk)))
	if chunk >= 2*transport.DataAlign {
		// Whole disk blocks, each chunk ending on a block's boundary of
		// the file: the asker writes them past the page cache, from where
		// it read them (docs/sync.md §7.7).
		chunk -= chunk % transport.DataAlign
	}
	ahead := startReadAhead(r, x.next, x.size, chunk)
	defer ahead.stop()
	var head [fileDataHeadMax]byte
	checked := time.Now()
	for x.next < x.size {
		b, ok := ahead.next(s.ctx)
		if !ok {
			return
		}
		if b.err != nil {
			s.c.p.log.Warn("reading a file to serve", "file", x.file.String(), "err", b.err)
			s.post(encodeFileStop(s.sid, x.file, codeFileNotHeld, fileNotHeldText))
			return
		}
		// The chunk goes in FILE-DATA of at most the credit each, every
		// one's head written in place just before its bytes.
		for sent := 0; sent < b.n; {
			s.files.mu.Lock()
			credit := x.credit
			s.files.mu.Unlock()
			if credit == 0 {
				select {
				case <-x.more:
					continue
				case <-x.stop:
					s.post(encodeFileStop(s.sid, x.file, codeFileStopped, "stopped as asked"))
					return
				case <-s.ctx.Done():
					return
				}
			}
			select {
			case <-x.stop:
				s.post(encodeFileStop(s.sid, x.file, codeFileStopped, "stopped as asked"))
				return
			case <-s.ctx.Done():
				return
			default:
			}
			if time.Since(checked) > recheckEvery {
				// A member removed, a key revoked: what it may read is asked
				// again while it is sent.
				checked = time.Now()
				if ok, err := s.c.host.MayRead(s.ctx, s.space, s.c.peer); err == nil && !ok {
					s.post(encodeFileStop(s.sid, x.file, codeFileNotHeld, fileNotHeldText))
					return
				}
			}
			n := int(min(int64(b.n-sent), credit))
			h := appendFileDataHead(head[:0], s.sid, x.file, x.next)
			at := aheadRoom + sent
			f := b.buf[at-len(h)-1 : at+n]
			copy(f[1:], h)
			if s.c.out.take(s.ctx, len(f)-1, 0) != nil {
				return
			}
			err := s.c.sendFrame(s.ctx, s, f)
			s.c.out.give(len(f) - 1)
			if err != nil {
				return
			}
			sent += n
			s.files.mu.Lock()
			x.next += int64(n)
			x.credit -= int64(n)
			s.files.mu.Unlock()
		}
		ahead.done(b)
	}
}

// aheadRoom is the room before a chunk's bytes for the transport's byte
// and a FILE-DATA's head.
const aheadRoom = 1 + fileDataHeadMax

// readAhead reads a file's chunks in order on its own goroutine, one
// ahead of the one being sent: reading and sending overlap, and a
// transfer holds at most two chunks.
type readAhead struct {
	full   chan aheadChunk
	free   chan []byte
	quit   chan struct{}
	exited chan struct{}
}

// aheadChunk is a chunk read: its bytes are buf[aheadRoom:aheadRoom+n].
type aheadChunk struct {
	buf []byte
	n   int
	err error
}

func startReadAhead(r io.ReaderAt, off, size, chunk int64) *readAhead {
	bufs := 2
	if size-off <= chunk {
		bufs = 1
	}
	a := &readAhead{full: make(chan aheadChunk, bufs), free: make(chan []byte, bufs), quit: make(chan struct{}), exited: make(chan struct{})}
	if bufs == 1 {
		// One chunk: nothing to overlap, read here.
		buf := make([]byte, aheadRoom+int(size-off))
		_, err := r.ReadAt(buf[aheadRoom:], off)
		a.full <- aheadChunk{buf: buf, n: int(size - off), err: err}
		a.free = nil
		close(a.exited)
		return a
	}
	for range bufs {
		a.free <- make([]byte, aheadRoom+int(min(chunk, size-off)))
	}
	go func() {
		defer close(a.exited)
		for off < size {
			var buf []byte
			select {
			case buf = <-a.free:
			case <-a.quit:
				return
			}
			n := int(min(chunk, size-off))
			if chunk%transport.DataAlign == 0 && int64(n) == chunk {
				// Resumed off a block's boundary: the first chunk ends on
				// the next one, and the rest stay whole blocks.
				n -= int(off % transport.DataAlign)
			}
			_, err := r.ReadAt(buf[aheadRoom:aheadRoom+n], off)
			select {
			case a.full <- aheadChunk{buf: buf, n: n, err: err}:
			case <-a.quit:
				return
			}
			if err != nil {
				return
			}
			off += int64(n)
		}
	}()
	return a
}

// next is the next chunk; false when ctx ends first.
func (a *readAhead) next(ctx context.Context) (aheadChunk, bool) {
	select {
	case c := <-a.full:
		return c, true
	case <-ctx.Done():
		return aheadChunk{}, false
	}
}

// done gives a chunk's buffer back to be read into.
func (a *readAhead) done(c aheadChunk) {
	if a.free != nil {
		a.free <- c.buf
	}
}

// stop ends the reading and waits for it: the file may be closed then.
func (a *readAhead) stop() {
	close(a.quit)
	<-a.exited
}
