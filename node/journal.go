package node

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/minca-go/minca/internal/atomicfile"
)

// ErrCursorGone: a subscriber asked for events after a cursor older than
// the journal keeps (Options.EventJournalBytes, EventJournalAge); the
// events between were dropped, and it would miss some. It subscribes from
// now on ("") and reads the records it follows again. A *CursorGoneError
// says which cursor and from where the node can resume.
var ErrCursorGone = errors.New("minca/node: the cursor is older than the events the node keeps")

// CursorGoneError is [ErrCursorGone] with the cursors.
type CursorGoneError struct {
	// Cursor is the cursor asked for.
	Cursor string
	// Dropped is the last event the journal no longer keeps: a cursor
	// at or after it resumes without a gap.
	Dropped string
}

func (e *CursorGoneError) Error() string {
	return "minca/node: cursor " + e.Cursor + " is older than the events the node keeps: events up to " + e.Dropped +
		" were dropped from its journal (Options.EventJournalBytes, EventJournalAge); subscribe from now and read the records again"
}

// Is makes errors.Is(err, ErrCursorGone) hold.
func (e *CursorGoneError) Is(target error) bool { return target == ErrCursorGone }

// journal keeps the events the change log cannot make again — waiting
// counts (and the forks and standing changes an older node kept here) — one
// JSON line each, synced before the event is published, so a subscriber
// resuming from an older cursor gets them too. It lives in the node
// directory. It is bounded: past maxBytes,
// or when its oldest event is older than maxAge (and an eighth), it is
// rewritten without its oldest events, down to half of maxBytes and
// nothing older than maxAge; its first line then names the last event
// dropped (the floor), and a subscriber resuming from before it gets a
// *CursorGoneError rather than a gap.
type journal struct {
	mu       sync.Mutex
	path     string
	f        *os.File
	maxBytes int64
	maxAge   time.Duration
	now      func() time.Time

	size   int64
	oldest int64  // unix ms the oldest event kept was journaled; 0 when none is kept
	floor  cursor // the last event dropped
	last   map[uint64]int
	top    uint64
}

const journalName = "events.log"

// journalLine is a line of the journal: an event with when it was
// journaled, or (the first line, alone) the floor.
type journalLine struct {
	Event
	Journaled int64  `json:"journaled,omitempty"` // unix ms
	Floor     string `json:"floor,omitempty"`
}

func openJournal(dir string, maxBytes int64, maxAge time.Duration, now func() time.Time) (*journal, error) {
	j := &journal{path: filepath.Join(dir, journalName), last: map[uint64]int{}, maxBytes: maxBytes, maxAge: maxAge, now: now}
	floor, whole, err := j.scan(func(ev Event, at int64, line []byte) {
		j.size += int64(len(line)) + 1
		if j.oldest == 0 {
			j.oldest = at
		}
		if ev.seq >= j.top {
			j.top = ev.seq
			j.last = map[uint64]int{ev.seq: ev.idx}
		}
	})
	if err != nil {
		return nil, err
	}
	j.floor = floor
	if j.f, err = os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("minca/node: event journal: %w", err)
	}
	if err := cutTorn(j.path, j.f, whole); err != nil {
		j.f.Close()
		return nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.due() {
		if err := j.compact(); err != nil {
			j.f.Close()
			return nil, err
		}
	}
	return j, nil
}

// lastIdx is the last idx journaled at seq (0 when none).
func (j *journal) lastIdx(seq uint64) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.last[seq]
}

// dropped is the last event no longer kept; zero when none was dropped.
func (j *journal) dropped() cursor {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.floor
}

func (j *journal) append(ev Event) error {
	at := j.now().UnixMilli()
	b, err := json.Marshal(journalLine{Event: ev, Journaled: at})
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return err
	}
	if ev.seq > j.top {
		j.top, j.last = ev.seq, map[uint64]int{}
	}
	j.last[ev.seq] = ev.idx
	j.size += int64(len(b)) + 1
	if j.oldest == 0 {
		j.oldest = at
	}
	if err := j.f.Sync(); err != nil {
		return err
	}
	if j.due() {
		return j.compact()
	}
	return nil
}

// due says whether the journal is past its bounds; j.mu is held. Age
// has an eighth of slack, so it is not rewritten at every event.
func (j *journal) due() bool {
	if j.size > j.maxBytes {
		return true
	}
	return j.maxAge > 0 && j.oldest != 0 && j.now().Sub(time.UnixMilli(j.oldest)) > j.maxAge+j.maxAge/8
}

// compact rewrites the journal without its oldest events: none journaled
// longer than maxAge ago, at most half of maxBytes. The new file is synced
// and renamed over the old, so a crash leaves one or the other. j.mu is
// held.
func (j *journal) compact() error {
	type kept struct {
		ev   Event
		at   int64
		line []byte
	}
	var all []kept
	var total int64
	floor, _, err := j.scan(func(ev Event, at int64, line []byte) {
		all = append(all, kept{ev, at, bytes.Clone(line)})
		total += int64(len(line)) + 1
	})
	if err != nil {
		return err
	}
	old := func(at int64) bool { return j.maxAge > 0 && j.now().Sub(time.UnixMilli(at)) > j.maxAge }
	k := 0
	for ; k < len(all) && (old(all[k].at) || total > j.maxBytes/2); k++ {
		total -= int64(len(all[k].line)) + 1
	}
	if k > 0 {
		floor = cursor{all[k-1].ev.seq, all[k-1].ev.idx}
	}
	var buf bytes.Buffer
	if floor != (cursor{}) {
		fmt.Fprintf(&buf, "{\"floor\":%s}\n", strconv.Quote(floor.String()))
	}
	for _, e := range all[k:] {
		buf.Write(e.line)
		buf.WriteByte('\n')
	}
	if err := atomicfile.WriteFile(j.path, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("minca/node: event journal: %w", err)
	}
	f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("minca/node: event journal: %w", err)
	}
	j.f.Close()
	j.f, j.floor, j.size, j.oldest = f, floor, total, 0
	if k < len(all) {
		j.oldest = all[k].at
	}
	return nil
}

// scan calls fn with each event of the journal file, in order, and
// returns the file's floor and how many of its bytes hold whole lines.
// A line cut short by a crash ends the journal.
func (j *journal) scan(fn func(ev Event, at int64, line []byte)) (floor cursor, whole int64, err error) {
	f, err := os.Open(j.path)
	if errors.Is(err, fs.ErrNotExist) {
		return cursor{}, 0, nil
	}
	if err != nil {
		return cursor{}, 0, fmt.Errorf("minca/node: event journal: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	sc.Split(wholeLines)
	for first := true; sc.Scan(); first = false {
		var l journalLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			break
		}
		if first && l.Floor != "" {
			if floor, err = parseCursor(l.Floor); err != nil {
				return cursor{}, 0, fmt.Errorf("minca/node: event journal: damaged: its floor: %w", err)
			}
			whole += int64(len(sc.Bytes())) + 1
			continue
		}
		c, err := parseCursor(l.Cursor)
		if err != nil {
			break
		}
		l.seq, l.idx = c.seq, c.idx
		fn(l.Event, l.Journaled, sc.Bytes())
		whole += int64(len(sc.Bytes())) + 1
	}
	return floor, whole, nil
}

// cutTorn cuts off what follows the journal's last whole line when it is
// a last line without its '\n' — a write a crash cut short — or the next
// event would be joined to it and lost. A damaged line followed by others
// is left as it is (reading stops at it).
func cutTorn(path string, f *os.File, whole int64) error {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) <= whole || bytes.IndexByte(data[whole:], '\n') >= 0 {
		return err
	}
	if err := f.Truncate(whole); err != nil {
		return fmt.Errorf("minca/node: event journal: cutting off a torn line: %w", err)
	}
	return nil
}

// wholeLines splits at '\n' and drops a last line without one: a write a
// crash cut short.
func wholeLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF {
		return len(data), nil, bufio.ErrFinalToken
	}
	return 0, nil, nil
}

// read returns the events journaled in (from, to], in order; a
// *CursorGoneError when events after from were dropped. It reads the file
// as it is when opened (a compaction renames a new one over it), and that
// file's floor.
func (j *journal) read(from, to cursor) ([]Event, error) {
	var out []Event
	floor, _, err := j.scan(func(ev Event, _ int64, _ []byte) {
		c := cursor{ev.seq, ev.idx}
		if from.before(c) && !to.before(c) {
			out = append(out, ev)
		}
	})
	if err != nil {
		return nil, err
	}
	if from.before(floor) {
		return nil, &CursorGoneError{Cursor: from.String(), Dropped: floor.String()}
	}
	return out, nil
}

func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f.Close()
}
