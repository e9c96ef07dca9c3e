package peers

import (
	"bytes"
	"errors"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/transport"
)

// Fetching files from the peer (docs/sync.md §7.7).

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
		if w, ok := s.files.stopping[f.file]; ok && w.left >= n {
			// Bytes still coming are not an unanswered stop: its wait
			// counts from the last of them.
			w.left -= n
			w.at = time.Now()
			s.files.stopping[f.file] = w
			if w.left == 0 && w.ends {
				// Every byte granted came, the file's last with them: the
				// holder's part ended with it, and it drops the stop
				// unanswered (FILE-STOP for no transfer). Remembered, the
				// file would never be asked of this peer again. (Granted
				// bytes short of the end leave the holder waiting on
				// credit: it answers, and the file waits for that answer,
				// which asked again first would cancel the new ask.)
				delete(s.files.stopping, f.file)
			}
			fileChunk{frame: m.frame, size: m.size}.done(s.c.in)
			m.frame, m.size = transport.Frame{}, 0
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
	x.queue = append(x.queue, fileChunk{data: f.data, size: m.size, frame: m.frame})
	m.frame, m.size = transport.Frame{}, 0
	select {
	case x.wake <- struct{}{}:
	default:
	}
	return nil
}

// takeFileData hands a FILE-DATA from the connection's reader straight
// to its transfer's writer when it is the transfer's next bytes within
// the credit (or bytes of a stopped transfer still owed), so a file's
// chunks pass no session reader on their way to the disk. Anything else
// (a session ending, a FILE-DATA the session ends for) is left to the
// session's reader, in the connection's order: false. What comes ahead
// of it in the inbox cannot make it valid: a transfer is only started
// and its FILE-WANT sent by this end, and no byte of it follows the
// holder's FILE-STOP.
func (s *session) takeFileData(m *message) bool {
	if s.ctx.Err() != nil {
		return false
	}
	return s.fileData(m) == nil
}

// writeFile writes a transfer's bytes to its partial file as they come,
// durably, granting credit back as they are written, and with the last
// byte checks the file and keeps it; a transfer dropped meanwhile leaves
// its partial file for the next ask.
func (s *session) writeFile(x *fetchXfer, version canonical.ID) {
	defer s.files.writers.Done()
	// The partial file is opened here, beside the others, and the
	// FILE-WANT sent from where it stopped.
	p, err := s.c.host.Store().OpenPartial(s.ctx, engine.FileRef{Hash: x.file, Size: x.size})
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
	if off == x.size {
		// Whole already: its last bytes came as a transfer ended, before
		// it was kept. Checked and kept now; a FILE-WANT must ask for at
		// least a byte.
		x.p, x.next = p, off
		s.keepWhole(x)
		return
	}
	credit := min(int64(fileWindow), x.size-off)
	x.p, x.next, x.unreceived, x.sole, x.lastData = p, off, credit, off == 0, time.Now()
	s.post(encodeFileWant(s.sid, x.file, version, x.size, off, credit))
	s.files.mu.Unlock()
	s.c.p.log.Debug("file asked", "file", x.file.String(), "space", s.space, "sid", s.sid, "offset", off, "credit", credit, "peer", s.c.peer.DID)
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
		// What came while the last write went on is written at once, up
		// to fileWriteMost: a disk slower than the link then has several
		// MiB of the file in flight, not a chunk at a time.
		k, n := 0, 0
		for k < len(x.queue) && (k == 0 || n+len(x.queue[k].data) <= fileWriteMost) {
			n += len(x.queue[k].data)
			k++
		}
		cs := make([]fileChunk, k)
		copy(cs, x.queue)
		clear(x.queue[:k])
		x.queue = x.queue[k:]
		s.files.mu.Unlock()
		var err error
		if w := s.c.p.beforeFileWrite; w != nil {
			err = w()
		}
		// Each chunk is hashed on the file's hasher beside this write and
		// the next, and its frame counts in the RecvQueue until both are
		// done.
		if err == nil {
			bs, rs := make([][]byte, k), make([]func(), k)
			for i, c := range cs {
				bs[i], rs[i] = c.data, func() { c.done(s.c.in) }
			}
			_, err = x.p.WriteHashAsideAll(bs, rs)
		} else {
			for _, c := range cs {
				c.done(s.c.in)
			}
		}
		s.files.mu.Lock()
		if err != nil {
			s.c.p.log.Warn("writing a file from a peer", "file", x.file.String(), "err", err)
			if !x.dropped {
				s.dropFetchLocked(x.file, x, codeFileCancel)
				// Asked again once the retry wait passes, not at once: a
				// full disk is not full a moment later.
				s.files.lacked[x.file] = time.Now()
			}
			for _, c := range x.queue {
				c.done(s.c.in)
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
		written += int64(n)
		x.toGrant += int64(n)
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
		s.keepWhole(x)
		return
	}
}

// keepWhole frees a transfer whose file is whole, and checks and keeps
// the file. s.files.mu is held, and let go.
func (s *session) keepWhole(x *fetchXfer) {
	delete(s.files.fetching, x.file)
	s.c.files.mu.Lock()
	s.c.files.fetching[b2i(x.small)]--
	s.c.files.mu.Unlock()
	s.files.keeping[x.file] = struct{}{}
	s.files.mu.Unlock()
	s.files.free()
	s.keepFile(x)
	s.files.mu.Lock()
	delete(s.files.keeping, x.file)
	s.files.mu.Unlock()
	s.files.free()
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
	s.c.p.log.Debug("file transfer dropped", "file", file.String(), "space", s.space, "sid", s.sid, "next", x.next, "size", x.size, "unreceived", x.unreceived, "stop", stop)
	if stop != "" && x.next < x.size {
		s.files.stopping[file] = stopWait{left: x.unreceived, at: time.Now(), ends: x.next+x.unreceived == x.size}
		s.post(encodeFileStop(s.sid, file, stop, "the transfer is stopped"))
	}
	// Once every byte of the file has come (and a write of them failed),
	// the holder's part has ended and a stop would go unanswered (a
	// FILE-STOP for no transfer): the file would wait on the answer,
	// never asked for again, for the rest of the session. None is sent.
}

// fetchFiles asks the peer for the files the store lacks that versions of
// the space held whole name, as the policy says, and those readers asked
// for, until the session ends or it has nothing to fetch and nothing in
// hand (it is then started again on demand, files_idle.go); it stops
// transfers that stall.
func (s *session) fetchFiles() {
	st := s.c.host.Store()
	wanter, _ := s.c.host.(fileWanter)
	tick := time.NewTicker(fileCheckEvery)
	defer tick.Stop()
	var lastVersions int64 = -1
	var lastScan time.Time
	var after canonical.ID // where the last look stopped: the next goes on from there
	kept := false          // a file arrived: the next in line is asked for at once
	for {
		arrived, named := st.FileKept(), st.FileNamed()
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
		scan := stats.Versions != lastVersions || time.Since(lastScan) > fileRescanEvery
		// A file kept or a slot freed looks again, at most once every
		// fileLookGap: with many small transfers they come by the hundred,
		// and each look reads the store's missing files.
		var soon <-chan time.Time
		if kept {
			if gap := fileLookGap - time.Since(lastScan); gap > 0 {
				soon = time.After(gap)
			} else {
				scan = true
			}
		}
		var missing []engine.NamedFile
		room := s.room()
		scanned := scan && room > 0
		if scanned {
			lastVersions, lastScan, kept = stats.Versions, time.Now(), false
			var err error
			if missing, err = s.lookMissing(after, room); err != nil {
				return
			}
		}
		listed := len(missing)
		for _, f := range wants {
			if f.Space == s.space {
				missing = append(missing, f)
			}
		}
		// The next look goes on past the last file asked for, unless one
		// before it waits for a slot of its kind.
		advance := true
		for i, f := range missing {
			done, more := s.askFile(f)
			if !more {
				break
			}
			advance = advance && done
			if advance && i < listed {
				after = f.Hash
			}
		}
		if scanned && listed < room {
			// The look went round to where it started: the next starts
			// at the first, where a file let go meanwhile may be.
			after = canonical.ID{}
		}
		if scanned && len(missing) == 0 && s.idleFiles() && s.c.p.idle.park(s, named, wantCh) {
			// Nothing to fetch and nothing in hand: the fetcher ends, and
			// is started again when a version names a missing file or a
			// reader asks for one (files_idle.go).
			return
		}
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		case <-soon:
		case <-wantCh:
		case <-arrived:
			kept = true
		case <-s.files.freed:
			kept = true
		case <-named:
		}
	}
}

// lookMissing lists up to most missing files the policy fetches, from
// past after to the last, then from the first up to after: the files
// asked for before after are in hand, or were passed over at the last
// look, so each look reads past a few, not all of them.
func (s *session) lookMissing(after canonical.ID, most int) ([]engine.NamedFile, error) {
	st := s.c.host.Store()
	pol := s.c.p.o.Files
	var missing []engine.NamedFile
	err := st.MissingFilesAfter(s.ctx, s.space, after, s.inHand, func(f engine.NamedFile) bool {
		if pol.fetches(f.Size) {
			missing = append(missing, f)
		}
		return len(missing) < most
	})
	if err != nil || len(missing) == most || after == (canonical.ID{}) {
		return missing, err
	}
	err = st.MissingFilesAfter(s.ctx, s.space, canonical.ID{}, s.inHand, func(f engine.NamedFile) bool {
		if bytes.Compare(f.Hash[:], after[:]) > 0 {
			return false
		}
		if pol.fetches(f.Size) {
			missing = append(missing, f)
		}
		return len(missing) < most
	})
	return missing, err
}

// inHand reports whether a file is not to be asked for now: in flight,
// being kept, lacked of late, or stopped and not yet answered. Missing
// files are looked for past these, at the cost of reading their index
// entries only.
func (s *session) inHand(file canonical.ID) bool {
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	_, keeping := s.files.keeping[file]
	_, stopping := s.files.stopping[file]
	return keeping || stopping || s.files.fetching[file] != nil || time.Since(s.files.lacked[file]) < time.Duration(s.c.p.fileRetry.Load())
}

// room is how many transfers could start now: the slots of either kind
// free on the connection, at most as many as the session may start
// keeping. Looking for more missing files than that is work for
// nothing: each costs a look for a version naming it.
func (s *session) room() int {
	s.files.mu.Lock()
	keeping := len(s.files.keeping)
	s.files.mu.Unlock()
	cf := &s.c.files
	cf.mu.Lock()
	free := MaxFileTransfers - cf.fetching[0] + MaxSmallTransfers - cf.fetching[1]
	cf.mu.Unlock()
	return max(0, min(free, maxKeeping-keeping))
}

// askFile starts a transfer of f unless it is in flight or lacked here
// (done either way); not done when the connection runs as many transfers
// of its kind as it may, and more false when no other could start either:
// the connection runs as many of both kinds, or the session keeps as many
// files as it may.
func (s *session) askFile(f engine.NamedFile) (done, more bool) {
	file, version := f.Hash, f.Version
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	if len(s.files.keeping) >= maxKeeping {
		return false, false
	}
	// A file being kept is still listed missing until it is recorded, and
	// one failing its hash is marked lacked only then: asked again
	// meanwhile, it would be asked of the peer that sent the wrong bytes.
	if _, ok := s.files.keeping[file]; ok || s.files.fetching[file] != nil || time.Since(s.files.lacked[file]) < time.Duration(s.c.p.fileRetry.Load()) {
		return true, true
	}
	if _, ok := s.files.stopping[file]; ok {
		return true, true
	}
	// Small: a file of at most SmallFile bytes, its credit the rest of it.
	small := f.Size <= SmallFile
	most := [2]int{MaxFileTransfers, MaxSmallTransfers}
	cf := &s.c.files
	cf.mu.Lock()
	if cf.fetching[b2i(small)] >= most[b2i(small)] {
		other := cf.fetching[b2i(!small)] < most[b2i(!small)]
		cf.mu.Unlock()
		return false, other
	}
	cf.fetching[b2i(small)]++
	cf.mu.Unlock()
	x := &fetchXfer{file: file, small: small, size: f.Size, lastData: time.Now(), wake: make(chan struct{}, 1)}
	s.files.fetching[file] = x
	s.files.writers.Add(1)
	go s.writeFile(x, version)
	return true, true
}

// stopStalled stops the transfers that received nothing for
// fileStallAfter while credit was granted: another peer is asked. A stop
// the peer left unanswered for fileStopWait (neither FILE-STOP nor any
// byte granted came) ends the session: waited on for ever, the file would
// never be asked of this peer again, and asked again in this session, a
// late byte of the old transfer would be taken for the new one's. The
// next session has an id of its own.
func (s *session) stopStalled() {
	stall := time.Duration(s.c.p.fileStall.Load())
	stopWait := time.Duration(s.c.p.fileStopWait.Load())
	s.files.mu.Lock()
	for file, x := range s.files.fetching {
		if x.unreceived > 0 && time.Since(x.lastData) > stall {
			s.dropFetchLocked(file, x, codeFileStalled)
			s.files.lacked[file] = time.Now()
		}
	}
	var unanswered canonical.ID
	var since time.Duration
	for file, w := range s.files.stopping {
		if d := time.Since(w.at); d > stopWait && d > since {
			unanswered, since = file, d
		}
	}
	s.files.mu.Unlock()
	if since > 0 {
		// Not under s.files.mu: the peer is told, and the connection's
		// reader may wait on it meanwhile.
		s.finish(ended(CodeFileUnanswered, "the transfer of %s was stopped, and for %v neither its stop was answered nor any of the bytes granted came", unanswered, since.Round(time.Millisecond)))
	}
}
