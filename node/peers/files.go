package peers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
)

// File transfers between peers (docs/sync.md §7.7): a session asks its
// peer for the files the versions it holds whole name and its store lacks,
// and serves the peer the files it asks for, each in chunks within credit
// the asker grants, so a file of any size costs each end its credit in
// memory, never its size.

// Reason codes of file transfers (docs/sync.md §7.7).
const (
	CodeFileFlood    = "sync/file-flood" // FILE-DATA past credit or size, out of order, unasked; a ninth transfer
	codeFileNotHeld  = "file/not-held"
	codeFileStopped  = "file/stopped"
	codeFileStalled  = "file/stalled"
	codeFileCancel   = "file/cancel"
	fileNotHeldText  = "the file is not held here"
	fileGrantStep    = 1 << 20          // credit given back once this much is written
	fileWindow       = 8 << 20          // credit granted and unreceived kept per transfer
	fileStallAfter   = 30 * time.Second // credit granted and nothing received
	fileRetryAfter   = 30 * time.Second // before asking a peer again for a file it lacked
	fileRescanEvery  = 10 * time.Second // the store's missing files looked for at least this often
	fileCheckEvery   = time.Second
	maxFileDataChunk = 1 << 20
)

// FilePolicy says which files a node fetches unasked: those the versions
// it holds whole name, all of them (the zero value), none, or those of at
// most Under bytes (docs/sync.md §7.7, `minca serve --files`). A file a
// reader asks for is fetched whatever the policy.
type FilePolicy struct {
	None  bool
	Under int64 // > 0: only files of at most this many bytes
}

// ParseFilePolicy reads `all`, `none` or `under:SIZE` (SIZE in bytes, or
// with KiB, MiB, GiB).
func ParseFilePolicy(s string) (FilePolicy, error) {
	switch {
	case s == "all" || s == "":
		return FilePolicy{}, nil
	case s == "none":
		return FilePolicy{None: true}, nil
	case strings.HasPrefix(s, "under:"):
		n, err := parseBytes(strings.TrimPrefix(s, "under:"))
		if err != nil || n <= 0 {
			return FilePolicy{}, fmt.Errorf("--files under:SIZE takes a size of at least 1 byte (8MiB): %q", s)
		}
		return FilePolicy{Under: n}, nil
	}
	return FilePolicy{}, fmt.Errorf("--files is all, none or under:SIZE, not %q", s)
}

func parseBytes(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if t, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = t, u.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > (1<<53)/mult {
		return 0, errors.New("not a size")
	}
	return n * mult, nil
}

// fetches reports whether the policy fetches a file of size unasked.
func (p FilePolicy) fetches(size int64) bool {
	return !p.None && (p.Under == 0 || size <= p.Under)
}

// fileWanter is a Host whose readers ask for files it lacks (a node's
// local API): they are fetched whatever the policy.
type fileWanter interface {
	FileWants(ctx context.Context) ([]engine.NamedFile, <-chan struct{})
}

// connFiles counts a connection's transfers each way: at most
// MaxFileTransfers, and besides them MaxSmallTransfers small ones.
type connFiles struct {
	mu       sync.Mutex
	serving  [2]int // by small (1) or not (0)
	fetching [2]int
}

// isSmall reports whether a transfer is small (docs/sync.md §7.7): of a
// file of at most SmallFile bytes, its credit covering the rest of it.
func isSmall(size, offset, credit int64) bool {
	return size <= SmallFile && credit >= size-offset
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sessionFiles are a session's transfers.
type sessionFiles struct {
	mu       sync.Mutex
	serving  map[canonical.ID]*serveXfer
	small    []*serveXfer // small transfers waiting to be served, in order
	smallRun bool         // a goroutine serves them
	fetching map[canonical.ID]*fetchXfer
	stopping map[canonical.ID]int64     // transfers this end stopped: bytes that may still come
	lacked   map[canonical.ID]time.Time // files the peer lacked, or stalled on, and when
	writers  sync.WaitGroup             // each fetch's writeFile
	keeping  int                        // files whole and being checked and kept
	freed    chan struct{}              // told when a transfer's last byte is written, or a file kept
}

// serveXfer is a file this end sends.
type serveXfer struct {
	file      canonical.ID
	version   canonical.ID
	small     bool
	size      int64
	next      int64
	credit    int64
	more      chan struct{} // told when credit comes
	stop      chan struct{} // closed when the asker stops the transfer
	stopped   bool
	startedAt time.Time
}

// fetchXfer is a file this end asks for. The session's reader checks
// each FILE-DATA and queues it; the transfer's own writer (writeFile)
// writes it and grants the credit back, so files in flight on a
// connection are written side by side and the reader goes on reading.
type fetchXfer struct {
	file       canonical.ID
	small      bool
	p          *engine.PartialFile // the writer's alone
	size       int64
	next       int64 // the offset the next FILE-DATA is at
	unreceived int64 // credit granted and not received
	toGrant    int64 // written and not yet granted back
	sole       bool  // every byte came from this peer on this connection
	lastData   time.Time
	queue      []fileChunk   // received, not yet written
	wake       chan struct{} // told when queue grows or the transfer is dropped
	dropped    bool
}

// fileChunk is a FILE-DATA's bytes waiting to be written; they count in
// the connection's RecvQueue (size) until they are.
type fileChunk struct {
	data []byte
	size int
}

func (f *sessionFiles) init() {
	f.serving = map[canonical.ID]*serveXfer{}
	f.fetching = map[canonical.ID]*fetchXfer{}
	f.stopping = map[canonical.ID]int64{}
	f.lacked = map[canonical.ID]time.Time{}
	f.freed = make(chan struct{}, 1)
}

// maxKeeping is how many files a session checks and keeps at once: the
// next are asked for while they are (the holder's part of a transfer
// ends with its last byte), and their syncs are shared.
const maxKeeping = MaxSmallTransfers

// maxLook is how many missing files a session looks at each time: enough
// to fill every slot past those in flight and being kept.
const maxLook = MaxSmallTransfers + maxKeeping + 4*MaxFileTransfers

func (f *sessionFiles) free() {
	select {
	case f.freed <- struct{}{}:
	default:
	}
}

// handleFile acts on a FILE-* message from the peer.
func (s *session) handleFile(m *message) *endError {
	f := m.file
	switch m.typ {
	case msgFileWant:
		return s.fileWant(f)
	case msgFileData:
		return s.fileData(m)
	case msgFileCredit:
		s.files.mu.Lock()
		defer s.files.mu.Unlock()
		x := s.files.serving[f.file]
		if x == nil || x.stopped {
			return nil
		}
		if x.credit+int64(f.credit) > MaxFileCredit {
			msg := fmt.Sprintf("FILE-CREDIT: more than %d bytes of credit unused in a transfer", MaxFileCredit)
			s.c.c.CloseWith(CodeMalformed, msg)
			return ended(CodeMalformed, "%s", msg)
		}
		x.credit += int64(f.credit)
		select {
		case x.more <- struct{}{}:
		default:
		}
		return nil
	case msgFileStop:
		s.files.mu.Lock()
		defer s.files.mu.Unlock()
		if x := s.files.serving[f.file]; x != nil && !x.stopped {
			x.stopped = true
			close(x.stop)
			return nil
		}
		if x := s.files.fetching[f.file]; x != nil {
			s.dropFetchLocked(f.file, x, "")
			s.files.lacked[f.file] = time.Now()
			return nil
		}
		delete(s.files.stopping, f.file)
		return nil
	}
	return nil
}

// fileWant serves a FILE-WANT when the peer may have the file: a version
// of this session's space and scope names it with that size, and the
// store holds it. Otherwise FILE-STOP file/not-held, the same for every
// reason. A small transfer waits its turn in the session's queue, the
// file unopened, and is served by one goroutine with the others.
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
		run := !s.files.smallRun
		s.files.smallRun = true
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

// serveSmall serves the session's small transfers in order until none
// waits.
func (s *session) serveSmall() {
	for {
		s.files.mu.Lock()
		if s.ctx.Err() != nil {
			// The session ended: what waits is never served.
			left := s.files.small
			s.files.small, s.files.smallRun = nil, false
			s.files.mu.Unlock()
			for _, x := range left {
				s.endServe(x)
			}
			return
		}
		if len(s.files.small) == 0 {
			s.files.smallRun = false
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
	v, err := st.Version(s.ctx, f.version.String())
	if err != nil || v.Space != s.space || !s.inScope(v.Collection) {
		return nil, false
	}
	hash, named := f.file.String(), false
	for _, ref := range engine.FilesOf(v) {
		named = named || (ref.Hash == hash && ref.Size == f.size)
	}
	if !named {
		return nil, false
	}
	r, err := st.OpenFile(s.ctx, hash)
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
// asker's stop, or the session's end.
func (s *session) serveFile(x *serveXfer, r engine.FileReader) {
	defer func() {
		r.Close()
		s.endServe(x)
	}()
	chunk := max(1, min(s.c.c.MaxMessage()-64, maxFileDataChunk))
	// One frame, reused: each is written whole before the next is read.
	frame := make([]byte, 0, 1+fileDataHeadMax+min(int64(chunk), x.size-x.next))
	checked := time.Now()
	for x.next < x.size {
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
		n := int(min(int64(chunk), credit, x.size-x.next))
		f := appendFileDataHead(frame[:1], s.sid, x.file, x.next)
		head := len(f)
		f = f[:head+n]
		if _, err := r.ReadAt(f[head:], x.next); err != nil {
			s.c.p.log.Warn("reading a file to serve", "file", x.file.String(), "err", err)
			s.post(encodeFileStop(s.sid, x.file, codeFileNotHeld, fileNotHeldText))
			return
		}
		if s.c.out.take(s.ctx, len(f)-1, 0) != nil {
			return
		}
		err := s.c.sendFrame(s.ctx, s, f)
		s.c.out.give(len(f) - 1)
		if err != nil {
			return
		}
		s.files.mu.Lock()
		x.next += int64(n)
		x.credit -= int64(n)
		s.files.mu.Unlock()
	}
}

// fileData checks a FILE-DATA against its transfer and queues it for the
// transfer's writer, which takes over its bytes in the connection's
// RecvQueue.
func (s *session) fileData(m *message) *endError {
	f := m.file
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	n := int64(len(f.data))
	x := s.files.fetching[f.file]
	if x == nil {
		if left, ok := s.files.stopping[f.file]; ok && left >= n {
			s.files.stopping[f.file] = left - n
			return nil
		}
		return ended(CodeFileFlood, "FILE-DATA for a file not asked for")
	}
	switch {
	case int64(f.offset) != x.next:
		return ended(CodeFileFlood, "FILE-DATA at offset %d; the next is %d", f.offset, x.next)
	case n > x.unreceived:
		return ended(CodeFileFlood, "FILE-DATA of %d bytes past the credit granted (%d)", n, x.unreceived)
	case x.next+n > x.size:
		return ended(CodeFileFlood, "FILE-DATA past the file's size")
	}
	x.next += n
	x.unreceived -= n
	x.lastData = time.Now()
	x.queue = append(x.queue, fileChunk{data: f.data, size: m.size})
	m.size = 0
	select {
	case x.wake <- struct{}{}:
	default:
	}
	return nil
}

// writeFile writes a transfer's bytes to its partial file as they come,
// durably, granting credit back as they are written, and with the last
// byte checks the file and keeps it; a transfer dropped meanwhile leaves
// its partial file for the next ask.
func (s *session) writeFile(x *fetchXfer, version canonical.ID) {
	defer s.files.writers.Done()
	// The partial file is opened here, beside the others, and the
	// FILE-WANT sent from where it stopped.
	p, err := s.c.host.Store().OpenPartial(s.ctx, engine.FileRef{Hash: x.file.String(), Size: x.size})
	s.files.mu.Lock()
	if err != nil || x.dropped {
		// Held meanwhile, or fetched by another session.
		if !x.dropped {
			s.dropFetchLocked(x.file, x, "")
		}
		s.files.mu.Unlock()
		if err == nil {
			p.Close()
		}
		return
	}
	off := p.Offset()
	credit := min(int64(fileWindow), x.size-off)
	x.p, x.next, x.unreceived, x.sole, x.lastData = p, off, credit, off == 0, time.Now()
	s.post(encodeFileWant(s.sid, x.file, version, x.size, off, credit))
	s.files.mu.Unlock()
	written := off
	for {
		s.files.mu.Lock()
		for len(x.queue) == 0 && !x.dropped {
			s.files.mu.Unlock()
			<-x.wake
			s.files.mu.Lock()
		}
		if len(x.queue) == 0 {
			// Dropped, and what came is written: the partial file stays.
			s.files.mu.Unlock()
			x.p.Close()
			return
		}
		c := x.queue[0]
		x.queue[0] = fileChunk{}
		x.queue = x.queue[1:]
		s.files.mu.Unlock()
		_, err := x.p.Write(c.data)
		s.c.in.give(c.size)
		s.files.mu.Lock()
		if err != nil {
			s.c.p.log.Warn("writing a file from a peer", "file", x.file.String(), "err", err)
			if !x.dropped {
				s.dropFetchLocked(x.file, x, codeFileCancel)
			}
			for _, c := range x.queue {
				s.c.in.give(c.size)
			}
			x.queue = nil
			s.files.mu.Unlock()
			x.p.Close()
			return
		}
		if x.dropped {
			s.files.mu.Unlock()
			continue
		}
		written += int64(len(c.data))
		x.toGrant += int64(len(c.data))
		if written < x.size {
			grant := min(x.toGrant, x.size-x.next-x.unreceived)
			if x.toGrant >= fileGrantStep && grant > 0 {
				x.unreceived += grant
				x.toGrant = 0
				s.post(encodeFileCredit(s.sid, x.file, grant))
			}
			s.files.mu.Unlock()
			continue
		}
		delete(s.files.fetching, x.file)
		s.c.files.mu.Lock()
		s.c.files.fetching[b2i(x.small)]--
		s.c.files.mu.Unlock()
		s.files.keeping++
		s.files.mu.Unlock()
		s.files.free()
		s.keepFile(x)
		s.files.mu.Lock()
		s.files.keeping--
		s.files.mu.Unlock()
		s.files.free()
		return
	}
}

// keepFile checks a whole file and keeps it; a file failing its hash
// counts against the peer when every byte of it came from this peer on
// this connection.
func (s *session) keepFile(x *fetchXfer) {
	err := x.p.Keep(s.ctx)
	if err == nil {
		s.c.p.log.Debug("file fetched", "file", x.file.String(), "size", x.size, "peer", s.c.peer.DID)
		return
	}
	s.files.mu.Lock()
	s.files.lacked[x.file] = time.Now()
	s.files.mu.Unlock()
	if !errors.Is(err, engine.ErrFileMismatch) {
		s.c.p.log.Warn("keeping a file from a peer", "file", x.file.String(), "err", err)
		return
	}
	s.c.p.log.Warn("a peer sent a file's bytes that do not match its hash", "file", x.file.String(), "peer", s.c.peer.DID, "all from it", x.sole)
	if !x.sole {
		return
	}
	if until := s.c.p.guard.forgeries(s.c.peer.DID, s.c.addr, 1, time.Now()); !until.IsZero() {
		s.c.p.forged(s.c.peer.DID, s.c.addr, until)
		s.finish(ended(CodeForged, "files failing their hash"))
	}
}

// dropFetchLocked ends a transfer this end asked for, keeping its partial
// file for the next ask; stop, when not "", tells the holder to stop
// with that code. s.files.mu is held.
func (s *session) dropFetchLocked(file canonical.ID, x *fetchXfer, stop string) {
	// What came is still written, in order, by the transfer's writer.
	x.dropped = true
	select {
	case x.wake <- struct{}{}:
	default:
	}
	delete(s.files.fetching, file)
	s.c.files.mu.Lock()
	s.c.files.fetching[b2i(x.small)]--
	s.c.files.mu.Unlock()
	if stop != "" {
		s.files.stopping[file] = x.unreceived
		s.post(encodeFileStop(s.sid, file, stop, "the transfer is stopped"))
	}
}

// fetchFiles asks the peer for the files the store lacks that versions of
// the space held whole name, as the policy says, and those readers asked
// for, until the session ends; it stops transfers that stall.
func (s *session) fetchFiles() {
	st := s.c.host.Store()
	wanter, _ := s.c.host.(fileWanter)
	tick := time.NewTicker(fileCheckEvery)
	defer tick.Stop()
	var lastVersions int64 = -1
	var lastScan time.Time
	kept := false // a file arrived: the next in line is asked for at once
	for {
		arrived := st.FileKept()
		var wants []engine.NamedFile
		var wantCh <-chan struct{}
		if wanter != nil {
			wants, wantCh = wanter.FileWants(s.ctx)
		}
		s.stopStalled()
		stats, err := st.Stats(s.ctx)
		if err != nil {
			return
		}
		scan := kept || stats.Versions != lastVersions || time.Since(lastScan) > fileRescanEvery
		var missing []engine.NamedFile
		if scan && s.canAsk() {
			lastVersions, lastScan, kept = stats.Versions, time.Now(), false
			pol := s.c.p.o.Files
			if err := st.MissingFiles(s.ctx, s.space, func(f engine.NamedFile) bool {
				if pol.fetches(f.Size) {
					missing = append(missing, f)
				}
				return len(missing) < maxLook
			}); err != nil {
				return
			}
		}
		for _, f := range wants {
			if f.Space == s.space {
				missing = append(missing, f)
			}
		}
		for _, f := range missing {
			if !s.askFile(f) {
				break
			}
		}
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		case <-wantCh:
		case <-arrived:
			kept = true
		case <-s.files.freed:
			kept = true
		}
	}
}

// canAsk reports whether a transfer could start now: a slot of either
// kind is free on the connection and the session keeps fewer files than
// it may. Looking for missing files while none could is work for nothing.
func (s *session) canAsk() bool {
	s.files.mu.Lock()
	keeping := s.files.keeping
	s.files.mu.Unlock()
	cf := &s.c.files
	cf.mu.Lock()
	defer cf.mu.Unlock()
	return keeping < maxKeeping && (cf.fetching[0] < MaxFileTransfers || cf.fetching[1] < MaxSmallTransfers)
}

// askFile starts a transfer of f unless it is in flight or lacked here;
// false when the connection runs as many transfers of its kind as it
// may, or the session keeps as many files as it may.
func (s *session) askFile(f engine.NamedFile) bool {
	file, err := canonical.ParseID(f.Hash)
	if err != nil {
		return true
	}
	version, err := canonical.ParseID(f.Version)
	if err != nil {
		return true
	}
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	if s.files.keeping >= maxKeeping {
		return false
	}
	if s.files.fetching[file] != nil || time.Since(s.files.lacked[file]) < fileRetryAfter {
		return true
	}
	if _, ok := s.files.stopping[file]; ok {
		return true
	}
	// Small: a file of at most SmallFile bytes, its credit the rest of it.
	small := f.Size <= SmallFile
	most := [2]int{MaxFileTransfers, MaxSmallTransfers}
	cf := &s.c.files
	cf.mu.Lock()
	if cf.fetching[b2i(small)] >= most[b2i(small)] {
		other := cf.fetching[b2i(!small)] < most[b2i(!small)]
		cf.mu.Unlock()
		return other
	}
	cf.fetching[b2i(small)]++
	cf.mu.Unlock()
	x := &fetchXfer{file: file, small: small, size: f.Size, lastData: time.Now(), wake: make(chan struct{}, 1)}
	s.files.fetching[file] = x
	s.files.writers.Add(1)
	go s.writeFile(x, version)
	return true
}

// stopStalled stops the transfers that received nothing for
// fileStallAfter while credit was granted: another peer is asked.
func (s *session) stopStalled() {
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	for file, x := range s.files.fetching {
		if x.unreceived > 0 && time.Since(x.lastData) > fileStallAfter {
			s.dropFetchLocked(file, x, codeFileStalled)
			s.files.lacked[file] = time.Now()
		}
	}
}

// endFiles ends the session's transfers once their writers let go:
// partial files are kept for the next ask; serving goroutines end with
// the session's context.
func (s *session) endFiles() {
	s.files.mu.Lock()
	for file, x := range s.files.fetching {
		s.dropFetchLocked(file, x, "")
	}
	s.files.mu.Unlock()
	s.files.writers.Wait()
}
