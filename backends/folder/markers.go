package folder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/minca-go/minca/engine"
)

// A folder's marker can exist more than once: two devices setting up one
// folder before their sync service met each write one, and the service
// keeps both, renaming one ("minca-store (Bob's conflicted copy
// 2026-01-02).json", "minca-store 2.json", F1). Every device applies the
// same rule to what it sees — the store's id is the smallest valid id
// among the marker and its copies — so all converge on one id without
// rewriting anything: segment names carry no store id, and a mirror moves
// its own state to the id the rule picks (engine/mirror).

// markerFile is one marker or copy of it, read.
type markerFile struct {
	name string // relative to the root
	data []byte
	id   string // "" when it is not a valid marker
}

// isMarkerCopy reports whether a file at the root is named like a copy a
// sync service made of the marker: "minca-store", a decoration, ".json".
func isMarkerCopy(n string) bool {
	l := strings.ToLower(n)
	return n != MarkerName && !isTempName(n) && strings.HasPrefix(l, "minca-store") && strings.HasSuffix(l, ".json")
}

func parseMarker(b []byte) string {
	var m marker
	if err := json.Unmarshal(b, &m); err != nil || m.Minca != "blobs" || m.V != 1 || !engine.ValidBlobComponent(m.ID) {
		return ""
	}
	return m.ID
}

// readMarkers reads the marker and every copy of it at the root. A file
// gone or unreadable since the root was listed is skipped: only markers
// that read and parse count.
func (s *Store) readMarkers() ([]markerFile, error) {
	es, err := s.fs.ReadDir(s.root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, engine.Errorf(engine.ErrBlobStoreGone, "%s is not there", s.root)
		}
		return nil, fmt.Errorf("minca/folder: marker: %w", err)
	}
	var out []markerFile
	for _, e := range es {
		if e.Dir || e.Dataless || (e.Name != MarkerName && !isMarkerCopy(e.Name)) {
			continue
		}
		b, err := s.fs.ReadFile(filepath.Join(s.root, e.Name))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || notYet(err) {
				continue
			}
			return nil, fmt.Errorf("minca/folder: marker %s: %w", e.Name, err)
		}
		out = append(out, markerFile{name: e.Name, data: b, id: parseMarker(b)})
	}
	return out, nil
}

// markerIDs returns the distinct valid ids among markers, sorted.
func markerIDs(ms []markerFile) []string {
	var ids []string
	for _, m := range ms {
		if m.id != "" {
			ids = append(ids, m.id)
		}
	}
	sort.Strings(ids)
	out := ids[:0]
	for i, id := range ids {
		if i == 0 || id != ids[i-1] {
			out = append(out, id)
		}
	}
	return out
}

// readIDs reads the markers and returns their ids, the store's first; no
// valid marker is [engine.ErrBlobStoreGone].
func (s *Store) readIDs() ([]string, error) {
	ms, err := s.readMarkers()
	if err != nil {
		return nil, err
	}
	ids := markerIDs(ms)
	if len(ids) == 0 {
		if len(ms) > 0 {
			return nil, engine.Errorf(engine.ErrBlobStoreGone, "%s in %s is not a Minca store marker", ms[0].name, s.root)
		}
		return nil, engine.Errorf(engine.ErrBlobStoreGone, "no %s in %s", MarkerName, s.root)
	}
	return ids, nil
}

// StoreIDs implements [engine.BlobMarkers].
func (s *Store) StoreIDs(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ids, err := s.readIDs()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.id = ids[0]
	s.mu.Unlock()
	return ids, nil
}

// TidyMarkers implements [engine.BlobMarkers]. Copies with the same bytes
// are one marker: the marker itself (or else the copy whose name sorts
// first) stays, and every other is removed — each only if its bytes are
// still those, read just before. Copies with other content (another
// device's marker from a setup race) stay, and the rule above keeps every
// device on one id while they do.
func (s *Store) TidyMarkers(ctx context.Context) (removed, left []string, err error) {
	if err := s.check("tidy", MarkerName); err != nil {
		return nil, nil, err
	}
	ms, err := s.readMarkers()
	if err != nil {
		return nil, nil, err
	}
	// The marker first, then the copies by name: the first of each
	// content is kept.
	sort.Slice(ms, func(i, j int) bool {
		if (ms[i].name == MarkerName) != (ms[j].name == MarkerName) {
			return ms[i].name == MarkerName
		}
		return ms[i].name < ms[j].name
	})
	var kept [][]byte
	for _, m := range ms {
		dup := m.id != "" && slices.ContainsFunc(kept, func(k []byte) bool { return bytes.Equal(k, m.data) })
		switch {
		case !dup && m.name == MarkerName:
			kept = append(kept, m.data)
		case !dup:
			kept = append(kept, m.data)
			left = append(left, m.name)
		case s.removeIfSame(m.name, m.data) != nil:
			left = append(left, m.name)
		default:
			removed = append(removed, m.name)
		}
	}
	return removed, left, nil
}

// RemoveStray implements [engine.BlobStrayRemover]: name must be a stray
// (outside the grammar, or a name of ours that is no segment's) and hold
// exactly same.
func (s *Store) RemoveStray(ctx context.Context, name string, same []byte) error {
	if !readable(name) || name == MarkerName {
		return &engine.BlobError{Op: "remove", Name: name, Err: engine.ErrBlobName}
	}
	if err := s.check("remove", name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.removeIfSame(name, same); err != nil {
		return &engine.BlobError{Op: "remove", Name: name, Err: err}
	}
	return nil
}

// errNotSame: a file to remove as a copy no longer holds the bytes it was
// compared by.
var errNotSame = errors.New("not the bytes it was compared by; left")

func (s *Store) removeIfSame(name string, same []byte) error {
	p := join(s.root, name)
	e, err := s.fs.Stat(p)
	if err != nil {
		return err
	}
	if e.Dir || e.Dataless || e.Size != int64(len(same)) {
		return errNotSame
	}
	b, err := s.fs.ReadFile(p)
	if err != nil {
		return err
	}
	if !bytes.Equal(b, same) {
		return errNotSame
	}
	if err := s.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return s.fs.SyncDir(filepath.Dir(p))
}
