package peers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/transport"
)

// File transfers between peers (docs/sync.md §7.7): a session asks its
// peer for the files the versions it holds whole name and its store lacks,
// and serves the peer the files it asks for, each in chunks within credit
// the asker grants, so a file of any size costs each end its credit in
// memory, never its size.

// Reason codes of file transfers (docs/sync.md §7.7).
const (
	CodeFileFlood = "sync/file-flood" // FILE-DATA past credit or size, out of order, unasked; a ninth transfer
	// CodeFileUnanswered ends a session whose peer neither answered a
	// FILE-STOP nor sent any of the bytes granted before it for 10 s
	// (docs/sync.md §7.7); the opener opens the next at once, and it asks
	// for the file again.
	CodeFileUnanswered = "sync/file-unanswered"
	codeFileNotHeld    = "file/not-held"
	codeFileStopped    = "file/stopped"
	codeFileStalled    = "file/stalled"
	codeFileCancel     = "file/cancel"
	fileNotHeldText    = "the file is not held here"
	fileGrantStep      = 1 << 20          // credit given back once this much is written
	fileWindow         = 8 << 20          // credit granted and unreceived kept per transfer
	fileStallAfter     = 30 * time.Second // credit granted and nothing received
	// fileStopWait is how long a stop this end sent may go unanswered,
	// nothing of its transfer coming either, before the session ends
	// (CodeFileUnanswered) and the next asks again. An honest holder
	// answers as soon as it reads the stop; the wait is short so that a
	// file whose FILE-WANT was lost is asked again within fileStallAfter,
	// fileStopWait and the opener's Reopen, each seen within
	// fileCheckEvery: under 45 s by default (docs/sync.md §7.7).
	fileStopWait     = 10 * time.Second
	fileRetryAfter   = 30 * time.Second // before asking a peer again for a file it lacked
	fileRescanEvery  = 10 * time.Second // the store's missing files looked for at least this often
	fileCheckEvery   = time.Second
	fileLookGap      = 5 * time.Millisecond // between looks for missing files a kept file starts
	maxFileDataChunk = 1 << 20
	fileWriteMost    = 4 << 20 // the most bytes of a transfer written with one write
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
	smallRun int          // goroutines serving them, at most smallServers
	fetching map[canonical.ID]*fetchXfer
	stopping map[canonical.ID]stopWait  // transfers this end stopped, waiting for the holder's answer
	lacked   map[canonical.ID]time.Time // files the peer lacked, or stalled on, and when
	writers  sync.WaitGroup             // each fetch's writeFile
	keeping  map[canonical.ID]struct{}  // files whole and being checked and kept: not asked for again meanwhile
	freed    chan struct{}              // told when a transfer's last byte is written, or a file kept
}

// stopWait is a transfer this end stopped: the bytes granted that may
// still come, and when the stop was sent or the last of them came. A
// stop that goes unanswered, nothing of its transfer coming either, for
// fileStopWait ends the session (docs/sync.md §7.7): the file may then be
// asked again, in a session of its own id, where no late byte of the old
// ask can be taken for the new one's.
type stopWait struct {
	left int64
	at   time.Time
	// ends: the bytes granted reach the file's end, so the holder's part
	// ends with the last of them and it answers no stop; otherwise its
	// part waits on credit when the stop comes, and it answers.
	ends bool
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

// fileChunk is a FILE-DATA's bytes waiting to be written, in the frame
// they were received in; the frame counts in the connection's RecvQueue
// (size) until they are written and it is released (done).
type fileChunk struct {
	data  []byte
	size  int
	frame transport.Frame
}

// done releases a chunk written or dropped, and gives its bytes back to
// the connection's RecvQueue.
func (c fileChunk) done(in *budget) {
	c.frame.Release()
	in.give(c.size)
}

func (f *sessionFiles) init() {
	f.serving = map[canonical.ID]*serveXfer{}
	f.fetching = map[canonical.ID]*fetchXfer{}
	f.stopping = map[canonical.ID]stopWait{}
	f.lacked = map[canonical.ID]time.Time{}
	f.keeping = map[canonical.ID]struct{}{}
	f.freed = make(chan struct{}, 1)
}

// maxKeeping is how many files a session checks and keeps at once: the
// next are asked for while they are (the holder's part of a transfer
// ends with its last byte), and their syncs are shared.
const maxKeeping = MaxSmallTransfers

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
		if lose := s.c.p.loseFileWant; lose != nil && lose() {
			return nil
		}
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
		s.c.p.log.Debug("file stop received", "file", f.file.String(), "space", s.space, "sid", s.sid, "code", f.code)
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

// TransferStatus is a file transfer of a session (docs/sync.md §7.7):
// State is fetching or serving (Next of Size bytes, Credit granted and
// unreceived, or given and unsent), stopping (this end stopped it and
// waits for the holder's answer or Credit more bytes, stopped, or last
// sent a byte of it, Ago seconds ago), lacked (the peer
// lacked it or stalled, Ago seconds ago: asked again after the retry
// wait), or keeping (whole, being checked and kept).
type TransferStatus struct {
	File   string  `json:"file"`
	State  string  `json:"state"`
	Next   int64   `json:"next,omitempty"`
	Size   int64   `json:"size,omitempty"`
	Credit int64   `json:"credit,omitempty"`
	Idle   float64 `json:"idle,omitempty"` // fetching: seconds since its last FILE-DATA
	Ago    float64 `json:"ago,omitempty"`
}

// transfers lists the session's file transfers in hand.
func (s *session) transfers() []TransferStatus {
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	var out []TransferStatus
	for f, x := range s.files.fetching {
		out = append(out, TransferStatus{File: f.String(), State: "fetching", Next: x.next, Size: x.size, Credit: x.unreceived, Idle: time.Since(x.lastData).Seconds()})
	}
	for f, x := range s.files.serving {
		out = append(out, TransferStatus{File: f.String(), State: "serving", Next: x.next, Size: x.size, Credit: x.credit})
	}
	for f, w := range s.files.stopping {
		out = append(out, TransferStatus{File: f.String(), State: "stopping", Credit: w.left, Ago: time.Since(w.at).Seconds()})
	}
	for f, at := range s.files.lacked {
		out = append(out, TransferStatus{File: f.String(), State: "lacked", Ago: time.Since(at).Seconds()})
	}
	for f := range s.files.keeping {
		out = append(out, TransferStatus{File: f.String(), State: "keeping"})
	}
	slices.SortFunc(out, func(a, b TransferStatus) int { return strings.Compare(a.State+a.File, b.State+b.File) })
	return out
}
