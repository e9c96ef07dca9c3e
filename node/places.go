package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
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
// Places is safe for concurrent use by goroutines and processes.
type Places struct {
	path string
	lock *flock.Flock
	key  string
}

// placesFile is the file's JSON form.
type placesFile struct {
	V     int                   `json:"v"`
	Key   string                `json:"key"`
	Lines map[string]*placeLine `json:"lines"`
}

// placeLine is one line: N is the next place, Last the id at N − 1.
type placeLine struct {
	N    int64  `json:"n"`
	Last string `json:"last,omitempty"`
}

// OpenPlaces returns the places of the session key key kept in dir (files
// places.json and places.lock).
func OpenPlaces(dir, key string) *Places {
	return &Places{
		path: filepath.Join(dir, placesName),
		lock: flock.New(filepath.Join(dir, placesLockName)),
		key:  key,
	}
}

// PlaceTxn is the lines as read under the lock, for one [Places.Update].
type PlaceTxn struct {
	f       placesFile
	changed bool
}

func lineName(space, collection string) string { return space + "\n" + collection }

// Peek returns the place a new version in collection of space takes next:
// log.n and log.prev (02 §4.10).
func (t *PlaceTxn) Peek(space, collection string) record.Log {
	l := t.f.Lines[lineName(space, collection)]
	if l == nil {
		return record.Log{}
	}
	return record.Log{N: l.N, Prev: l.Last}
}

// Take records that the version id was signed at the place Peek gave, or
// at a later one (n, when the store showed Peek's place taken already).
func (t *PlaceTxn) Take(space, collection string, n int64, id string) {
	name := lineName(space, collection)
	l := t.f.Lines[name]
	if l == nil {
		l = &placeLine{}
		t.f.Lines[name] = l
	}
	l.N, l.Last = n+1, id
	t.changed = true
}

// Lines lists the lines taken from: for each space, per collection, the
// last place used (what a revoke's cutoffs name, 06 §1.2).
func (t *PlaceTxn) Lines() map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for name, l := range t.f.Lines {
		sp, coll, ok := cutLine(name)
		if !ok || l.N == 0 {
			continue
		}
		if out[sp] == nil {
			out[sp] = map[string]int64{}
		}
		out[sp][coll] = l.N - 1
	}
	return out
}

func cutLine(name string) (string, string, bool) {
	for i := 0; i < len(name); i++ {
		if name[i] == '\n' {
			return name[:i], name[i+1:], true
		}
	}
	return "", "", false
}

// Update runs fn with the lines under the lock; when fn returns nil and
// took places, the lines are written durably (temp file, fsync, rename,
// fsync of the directory) before the lock is released. When fn fails,
// nothing is written: the places it peeked are given back.
func (p *Places) Update(fn func(t *PlaceTxn) error) error {
	if err := p.lock.Lock(); err != nil {
		return fmt.Errorf("minca/node: locking the log places: %w", err)
	}
	defer p.lock.Unlock()
	t := &PlaceTxn{}
	if err := p.read(&t.f); err != nil {
		return err
	}
	if err := fn(t); err != nil {
		return err
	}
	if !t.changed {
		return nil
	}
	return p.write(&t.f)
}

// Read returns the lines as they are now (under the lock).
func (p *Places) Read() (map[string]map[string]int64, error) {
	var out map[string]map[string]int64
	err := p.Update(func(t *PlaceTxn) error { out = t.Lines(); return nil })
	return out, err
}

func (p *Places) read(f *placesFile) error {
	b, err := os.ReadFile(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		*f = placesFile{V: 1, Key: p.key, Lines: map[string]*placeLine{}}
		return nil
	}
	if err != nil {
		return fmt.Errorf("minca/node: reading the log places: %w", err)
	}
	if err := json.Unmarshal(b, f); err != nil || f.V != 1 {
		return fmt.Errorf("minca/node: the log places %s are damaged (%v); the session key can no longer sign safely: sign out and start a new session", p.path, err)
	}
	if f.Key != p.key {
		return fmt.Errorf("minca/node: the log places %s are the key %s's, not %s's", p.path, f.Key, p.key)
	}
	if f.Lines == nil {
		f.Lines = map[string]*placeLine{}
	}
	return nil
}

func (p *Places) write(f *placesFile) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(p.path, b, 0o600); err != nil {
		return fmt.Errorf("minca/node: writing the log places: %w", err)
	}
	return nil
}

// Forget removes the places, once the key they belong to is forgotten.
func (p *Places) Forget() error {
	if err := p.lock.Lock(); err != nil {
		return err
	}
	defer p.lock.Unlock()
	if err := os.Remove(p.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeFileAtomic writes data to path whole or not at all, durably: a
// temporary file beside it, fsync, rename over path, fsync of the
// directory.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
