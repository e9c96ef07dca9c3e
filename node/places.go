package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gofrs/flock"
	"github.com/minca-go/minca/internal/atomicfile"
	"github.com/minca-go/minca/record"
)

// Places are a session key's writer lines (02 §4.10): for each (space,
// collection) the next place to give and the id of the version at the one
// before it. They are kept in one file beside the session key, never in a
// data folder or a store a backup could restore to an older copy, and every
// place is taken under a file lock that every process signing with the key
// shares, reading the last place from that file, never from a copy of its
// own. A place is written down before the version signed at it leaves the
// writer, so a crash after signing never hands it out again.
//
// The file is a log: a header line {"v":1,"key":DID}, then one line a
// batch with the lines it took from, each appended and synced (one fsync);
// a line cut short by a crash is of a batch that never left, and is cut
// off. Past 1 MiB the log is rewritten as one line, atomically. Places is
// safe for concurrent use by goroutines and processes.
type Places struct {
	path string
	lock *flock.Flock
	key  string

	mu    sync.Mutex // one Update at a time in this process
	lines map[string]*placeLine
	read  int64       // bytes of the file applied to lines
	file  os.FileInfo // the file they were read from
	// f is that file, kept open across Updates: each Update checks under
	// the lock, with one stat of the path, that it is still the file there
	// (another process's compaction renames a new one over it).
	f *os.File
}

// placeLine is one line: N is the next place, Last the id at N − 1.
type placeLine struct {
	N    int64  `json:"n"`
	Last string `json:"last,omitempty"`
}

type placesHeader struct {
	V   int    `json:"v"`
	Key string `json:"key"`
}

type placesEntry struct {
	Lines map[string]*placeLine `json:"lines"`
}

// compactAt is the size past which the log is rewritten as one line.
const compactAt = 1 << 20

// OpenPlaces returns the places of the session key key kept in dir (files
// places.log and places.lock).
func OpenPlaces(dir, key string) *Places {
	return &Places{
		path: filepath.Join(dir, placesName),
		lock: flock.New(filepath.Join(dir, placesLockName)),
		key:  key,
	}
}

// PlaceTxn is the lines as read under the lock, for one [Places.Update].
type PlaceTxn struct {
	lines   map[string]*placeLine
	changed map[string]*placeLine
}

func lineName(space, collection string) string { return space + "\n" + collection }

// Peek returns the place a new version in collection of space takes next:
// log.n and log.prev (02 §4.10).
func (t *PlaceTxn) Peek(space, collection string) record.Log {
	var buf [160]byte
	name := appendLineName(buf[:0], space, collection)
	l := t.changed[string(name)]
	if l == nil {
		l = t.lines[string(name)]
	}
	if l == nil {
		return record.Log{}
	}
	return record.Log{N: l.N, Prev: l.Last}
}

// appendLineName appends lineName(space, collection) to dst: the name
// looked up, with dst on the stack, without a string made.
func appendLineName(dst []byte, space, collection string) []byte {
	return append(append(append(dst, space...), '\n'), collection...)
}

// Take records that the version id was signed at the place Peek gave, or
// at a later one (n, when the store showed Peek's place taken already).
func (t *PlaceTxn) Take(space, collection string, n int64, id string) {
	var buf [160]byte
	if l := t.changed[string(appendLineName(buf[:0], space, collection))]; l != nil {
		l.N, l.Last = n+1, id // taken in this transaction: no one else holds it yet
		return
	}
	if t.changed == nil {
		t.changed = map[string]*placeLine{}
	}
	t.changed[lineName(space, collection)] = &placeLine{N: n + 1, Last: id}
}

// Lines lists the lines taken from: for each space, per collection, the
// last place used (what a revoke's cutoffs name, 06 §1.2).
func (t *PlaceTxn) Lines() map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	add := func(name string, l *placeLine) {
		sp, coll, ok := strings.Cut(name, "\n")
		if !ok || l.N == 0 {
			return
		}
		if out[sp] == nil {
			out[sp] = map[string]int64{}
		}
		out[sp][coll] = l.N - 1
	}
	for name, l := range t.lines {
		if t.changed[name] == nil {
			add(name, l)
		}
	}
	for name, l := range t.changed {
		add(name, l)
	}
	return out
}

// Update runs fn with the lines under the lock; when fn returns nil and
// took places, they are appended to the log and synced before the lock is
// released. When fn fails, nothing is written: the places it peeked are
// given back.
func (p *Places) Update(fn func(t *PlaceTxn) error) error {
	return p.update(fn, true)
}

// update is Update; with sync false the places are appended and not
// synced (UpdateDeferred).
func (p *Places) update(fn func(t *PlaceTxn) error, sync bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.lock.Lock(); err != nil {
		return fmt.Errorf("minca/node: locking the log places: %w", err)
	}
	defer p.lock.Unlock()
	f, err := p.catchUp()
	if err != nil {
		return err
	}
	t := &PlaceTxn{lines: p.lines}
	if err := fn(t); err != nil {
		return err
	}
	if len(t.changed) == 0 {
		return nil
	}
	if err := p.append(f, t.changed, sync); err != nil {
		return fmt.Errorf("minca/node: writing the log places: %w", err)
	}
	return nil
}

// Read returns the lines as they are now (under the lock).
func (p *Places) Read() (map[string]map[string]int64, error) {
	var out map[string]map[string]int64
	err := p.Update(func(t *PlaceTxn) error { out = t.Lines(); return nil })
	return out, err
}

// catchUp opens the log (made with its header if missing) unless the
// file open already is the one at the path, applies what another process
// appended since this one last read it, and cuts off a line a crash left
// unfinished. It returns the log open for appending at its end, kept open
// for the next Update.
func (p *Places) catchUp() (*os.File, error) {
	f, info, err := p.open()
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*os.File, error) {
		p.closeFile()
		return nil, err
	}
	if p.file == nil || !os.SameFile(p.file, info) || info.Size() < p.read {
		p.lines, p.read = map[string]*placeLine{}, 0 // another file: read it whole
	}
	p.file = info
	if info.Size() == 0 {
		h, _ := json.Marshal(placesHeader{V: 1, Key: p.key})
		if _, err := f.WriteAt(append(h, '\n'), 0); err != nil {
			return fail(err)
		}
		if err := f.Sync(); err != nil {
			return fail(err)
		}
		p.read = int64(len(h) + 1)
		if _, err := f.Seek(p.read, 0); err != nil {
			return fail(err)
		}
		return f, nil
	}
	if info.Size() > p.read {
		buf := make([]byte, info.Size()-p.read)
		if _, err := f.ReadAt(buf, p.read); err != nil {
			return fail(err)
		}
		for len(buf) > 0 {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				// The last line, cut short by a crash: its batch never
				// left. Cut it off so the next line starts clean.
				if err := f.Truncate(p.read); err != nil {
					return fail(err)
				}
				break
			}
			if err := p.apply(buf[:i]); err != nil {
				return fail(fmt.Errorf("minca/node: the log places %s are damaged at byte %d (%v); the session key can no longer sign safely: sign out and start a new session", p.path, p.read, err))
			}
			p.read += int64(i + 1)
			buf = buf[i+1:]
		}
	}
	if _, err := f.Seek(p.read, 0); err != nil {
		return fail(err)
	}
	return f, nil
}

// open returns the log's file and what it is now: the one kept open when
// it is still the file at the path, else the path opened (or made).
func (p *Places) open() (*os.File, os.FileInfo, error) {
	if p.f != nil {
		info, err := os.Stat(p.path)
		if err == nil && os.SameFile(info, p.file) {
			return p.f, info, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("minca/node: the log places: %w", err)
		}
		p.closeFile() // replaced or removed by another process
	}
	f, err := os.OpenFile(p.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("minca/node: the log places: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("minca/node: the log places: %w", err)
	}
	p.f = f
	return f, info, nil
}

// closeFile closes the file kept open; a deferred sync still running on it
// finishes first (os.File counts its users), and one that starts after
// syncs the path instead.
func (p *Places) closeFile() {
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

// Close closes the log's file kept open; a later Update opens it again.
func (p *Places) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeFile()
	return nil
}

// apply reads one line of the log into p.lines.
func (p *Places) apply(line []byte) error {
	if p.read == 0 {
		var h placesHeader
		if err := json.Unmarshal(line, &h); err != nil || h.V != 1 {
			return fmt.Errorf("minca/node: the log places %s have no header", p.path)
		}
		if h.Key != p.key {
			return fmt.Errorf("minca/node: the log places %s are the key %s's, not %s's", p.path, h.Key, p.key)
		}
		return nil
	}
	var e placesEntry
	if err := json.Unmarshal(line, &e); err != nil {
		return err
	}
	for name, l := range e.Lines {
		if l != nil {
			p.lines[name] = l
		}
	}
	return nil
}

// append writes a batch's lines at the log's end and syncs; past
// compactAt the log is rewritten as its header and one line.
func (p *Places) append(f *os.File, changed map[string]*placeLine, sync bool) error {
	b, err := json.Marshal(placesEntry{Lines: changed})
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Truncate(p.read) // a batch not written gives its places back
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	p.read += int64(len(b) + 1)
	for name, l := range changed {
		p.lines[name] = l
	}
	if p.read < compactAt {
		return nil
	}
	h, _ := json.Marshal(placesHeader{V: 1, Key: p.key})
	all, _ := json.Marshal(placesEntry{Lines: p.lines})
	data := append(append(append(h, '\n'), all...), '\n')
	if err := writeFileAtomic(p.path, data, 0o600); err != nil {
		return err
	}
	p.closeFile() // the old file, renamed over
	info, err := os.Stat(p.path)
	if err != nil {
		return err
	}
	p.file, p.read = info, int64(len(data))
	return nil
}

// Forget removes the places, once the key they belong to is forgotten.
func (p *Places) Forget() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.lock.Lock(); err != nil {
		return err
	}
	defer p.lock.Unlock()
	p.closeFile()
	p.lines, p.file, p.read = nil, nil, 0
	if err := os.Remove(p.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeFileAtomic writes data to path whole or not at all, durably: a
// temporary file beside it, fsync, rename over path, fsync of the
// directory.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	return atomicfile.WriteFile(path, data, perm)
}
