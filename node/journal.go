package node

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// journal keeps the events the change log cannot make again — standing
// changes, forks, waiting counts — one JSON line each, synced before the
// event is published, so a subscriber resuming from an older cursor gets
// them too. It lives in the node directory.
type journal struct {
	mu   sync.Mutex
	path string
	f    *os.File
	last map[uint64]int // the last idx journaled per seq, for the latest seq
	top  uint64
}

const journalName = "events.log"

func openJournal(dir string) (*journal, error) {
	j := &journal{path: filepath.Join(dir, journalName), last: map[uint64]int{}}
	evs, err := j.read(cursor{}, cursor{seq: ^uint64(0)})
	if err != nil {
		return nil, err
	}
	for _, ev := range evs {
		if ev.seq >= j.top {
			j.top = ev.seq
			j.last = map[uint64]int{ev.seq: ev.idx}
		}
	}
	if j.f, err = os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("minca/node: event journal: %w", err)
	}
	return j, nil
}

// lastIdx is the last idx journaled at seq (0 when none).
func (j *journal) lastIdx(seq uint64) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.last[seq]
}

func (j *journal) append(ev Event) error {
	b, err := json.Marshal(ev)
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
	return j.f.Sync()
}

// read returns the events journaled in (from, to], in order. A line cut
// short by a crash ends the journal.
func (j *journal) read(from, to cursor) ([]Event, error) {
	f, err := os.Open(j.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("minca/node: event journal: %w", err)
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			break
		}
		c, err := parseCursor(ev.Cursor)
		if err != nil {
			break
		}
		ev.seq, ev.idx = c.seq, c.idx
		if from.before(c) && !to.before(c) {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f.Close()
}
