package mirror

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror/internal/segment"
)

// Which blob store a mirror writes into, and what ties this store's state
// to it (DESIGN, Segments; F1, F10).
//
// A blob store is known by the id in its marker; the mirror's state (its
// writer, what it read) is kept under that id. Two things can change the
// id a path holds:
//
//   - Two devices set up one folder at once, each writing a marker, and the
//     sync service keeps both (a conflicted copy). Every device takes the
//     smallest valid id among the markers it sees ([engine.BlobMarkers]),
//     and a mirror whose id is not that one moves its state under it. The
//     segments stay as they are: their names and trailers carry the
//     writer's id, never the store's, so the writer keeps its segments,
//     its sequence and its export cursor, and nothing is written again.
//     The ids the store had before stay its aliases, so what was imported
//     under them is not exported back.
//   - The folder was emptied or removed and set up again (a new marker),
//     or another store was put in its place. The store remembers the id
//     it found at each location ([engine.BlobLocator]) and refuses another
//     there with [ErrBlobStoreChanged], naming both, unless Options.Adopt.
//     A location the store never mirrored to is set up without ceremony.

// ErrBlobStoreChanged: the blob store at a location this store mirrored to
// is not the one it found there before (F10). Errors carrying it are a
// [*StoreChangedError].
var ErrBlobStoreChanged = errors.New("minca/mirror: another blob store where this store mirrored to")

// StoreChangedError names the blob store a store remembers at a location
// and the one there now.
type StoreChangedError struct {
	Location   string // where, as the blob store says ([engine.BlobLocator])
	Remembered string // the store id this store found there before
	Found      string // the store id there now; "" when there is none
	Empty      bool   // the one there now holds no segments
}

func (e *StoreChangedError) Error() string {
	where := e.Location
	if where == "" {
		where = "the blob store's location"
	}
	if e.Found == "" {
		return fmt.Sprintf("%s held blob store %s when this store last mirrored to it; it now holds none (emptied or removed?): refusing to set up another there (adopting it mirrors there anew)",
			where, e.Remembered)
	}
	what := "another blob store"
	if e.Empty {
		what = "a new, empty blob store (emptied or removed, and set up again?)"
	}
	return fmt.Sprintf("%s held blob store %s when this store last mirrored to it; it now holds %s, %s: refusing it (adopting it mirrors there anew)",
		where, e.Remembered, e.Found, what)
}

// Unwrap makes errors.Is(err, ErrBlobStoreChanged) hold.
func (e *StoreChangedError) Unwrap() error { return ErrBlobStoreChanged }

// Remembered returns the id of the blob store s found at a location
// ([engine.BlobLocator]) when a mirror of it last ran there, or "" when it
// never mirrored there. It reads s and writes nothing, so an opener can
// refuse to set up a new blob store where s remembers another — the
// folder emptied or removed — before creating anything: return a
// [*StoreChangedError] with Found "" unless told to adopt.
func Remembered(ctx context.Context, s *engine.Store, location string) (string, error) {
	if location == "" {
		return "", nil
	}
	var p place
	_, err := loadJSON(ctx, s, placeKey(location), &p)
	return p.ID, err
}

// place is what this store found at a location.
type place struct {
	Location string `json:"location"`
	ID       string `json:"id"`
}

func placeKey(loc string) string {
	h := sha256.Sum256([]byte(loc))
	return "mirror/at/" + hex.EncodeToString(h[:16])
}

// bind reads the blob store's markers and settles which id this mirror
// works under: refusing another store where this one mirrored before,
// and moving the state when the markers converged on another id.
func (m *Mirror) bind(ctx context.Context) error {
	ids := []string{m.b.(engine.BlobStoreID).StoreID()}
	if bm, ok := m.b.(engine.BlobMarkers); ok {
		var err error
		if ids, err = bm.StoreIDs(ctx); err != nil {
			return err
		}
	}
	sid := ids[0]
	if !engine.ValidBlobComponent(sid) {
		return fmt.Errorf("minca/mirror: the blob store's id %q is not a valid name", sid)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	loc := ""
	if l, ok := m.b.(engine.BlobLocator); ok {
		loc = l.Locate()
	}
	var was place
	if loc != "" {
		if _, err := m.loadJSON(ctx, placeKey(loc), &was); err != nil {
			return err
		}
	}
	// related: the ids of this blob store — those its markers show, the
	// ones they had before, and a remembered id that had one of those as
	// an alias (its marker copy may be gone or not here yet: a sync
	// service removing a duplicate of it before bringing the other).
	related := map[string]bool{}
	add := func(id string) error {
		if id == "" || related[id] {
			return nil
		}
		related[id] = true
		as, err := m.aliases(ctx, id)
		for _, a := range as {
			related[a] = true
		}
		return err
	}
	for _, id := range ids {
		if err := add(id); err != nil {
			return err
		}
	}
	for _, id := range []string{was.ID, m.sid} {
		if id == "" {
			continue
		}
		as, err := m.aliases(ctx, id)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(as, func(a string) bool { return seen[a] }) {
			if err := add(id); err != nil {
				return err
			}
		}
	}
	if loc != "" {
		if was.ID != "" && !related[was.ID] {
			if !m.o.Adopt {
				return &StoreChangedError{Location: loc, Remembered: was.ID, Found: sid, Empty: m.empty(ctx)}
			}
			m.o.Logger.Warn("mirror: adopting another blob store where this store mirrored before (Options.Adopt)", "location", loc, "was", was.ID, "now", sid)
		}
	}
	if m.bound && m.sid != sid && !related[m.sid] {
		// Running, and the markers changed under us to another store's.
		if !m.o.Adopt {
			return &StoreChangedError{Location: loc, Remembered: m.sid, Found: sid, Empty: m.empty(ctx)}
		}
		m.o.Logger.Warn("mirror: adopting another blob store (Options.Adopt)", "was", m.sid, "now", sid)
	}
	moved, err := m.converge(ctx, sid, related)
	if err != nil {
		return err
	}
	// Aliases: every id of this store, kept under the id it has now.
	as, err := m.aliases(ctx, sid)
	if err != nil {
		return err
	}
	all := append(slices.Clone(as), moved...)
	for id := range related {
		all = append(all, id)
	}
	sort.Strings(all)
	all = slices.Compact(all)
	all = slices.DeleteFunc(all, func(id string) bool { return id == sid })
	if !slices.Equal(all, as) {
		if err := m.saveJSON(ctx, "mirror/"+sid+"/aliases", all); err != nil {
			return err
		}
	}
	if m.sid != sid && related[m.sid] {
		m.o.Logger.Info("mirror: the blob store's markers converged on another id; this store's state follows it", "was", m.sid, "now", sid, "markers", ids)
	}
	if m.sid != sid {
		// What was cached under the old id is reloaded under the new.
		m.w, m.known, m.reads = nil, nil, map[string]*readState{}
	}
	m.sid, m.from = sid, Source(sid)
	m.froms = map[string]bool{m.from: true}
	for _, a := range all {
		m.froms[Source(a)] = true
	}
	if loc != "" && (was.ID != sid || was.Location != loc) {
		if err := m.saveJSON(ctx, placeKey(loc), place{Location: loc, ID: sid}); err != nil {
			return err
		}
	}
	m.bound = true
	return nil
}

// empty reports whether the blob store holds no segments (a listing
// error counts as not known to be empty).
func (m *Mirror) empty(ctx context.Context) bool {
	l, err := m.b.List(ctx, segment.Prefix, "", 1)
	return err == nil && len(l) == 0
}

func (m *Mirror) aliases(ctx context.Context, id string) ([]string, error) {
	var as []string
	_, err := m.loadJSON(ctx, "mirror/"+id+"/aliases", &as)
	return as, err
}

// converge moves this store's state to sid from a related id when sid has
// none: the store kept its writer under the id the blob store had when
// it started mirroring there. It returns the ids it moved from.
func (m *Mirror) converge(ctx context.Context, sid string, related map[string]bool) ([]string, error) {
	if _, ok, err := m.s.Meta(ctx, "mirror/"+sid+"/writer"); err != nil || ok {
		return nil, err
	}
	var from []string
	for id := range related {
		if id == sid {
			continue
		}
		if _, ok, err := m.s.Meta(ctx, "mirror/"+id+"/writer"); err != nil {
			return nil, err
		} else if ok {
			from = append(from, id)
		}
	}
	if len(from) == 0 {
		return nil, nil
	}
	sort.Strings(from)
	if len(from) > 1 {
		// Only if the store once mirrored to two separate stores that
		// became one: the first keeps its writer; the others' segments
		// are read like any writer's, and nothing is lost.
		m.o.Logger.Warn("mirror: this store has state under several of the blob store's ids; keeping the first", "ids", from)
	}
	if err := m.moveState(ctx, from[0], sid); err != nil {
		return nil, err
	}
	return from[:1], nil
}

// moveState copies this store's state in a blob store from one id to
// another, the writer last (so a crash part way leaves the old state
// whole, moved again next time), then deletes the old.
func (m *Mirror) moveState(ctx context.Context, from, to string) error {
	var w writerState
	if _, err := m.loadJSON(ctx, "mirror/"+from+"/writer", &w); err != nil {
		return err
	}
	var writers []string
	if _, err := m.loadJSON(ctx, "mirror/"+from+"/writers", &writers); err != nil {
		return err
	}
	keys := []string{"writers", "aliases"}
	for _, r := range writers {
		keys = append(keys, "read/"+r)
	}
	top := w.Seq
	if w.Pending != nil {
		top = max(top, w.Pending.Seq)
	}
	if segment.ValidWriterID(w.ID) && top > 0 {
		for c := uint64(0); c <= (top-1)/hashChunk; c++ {
			keys = append(keys, "hashes/"+w.ID+"/"+strconv.FormatUint(c, 10))
		}
	}
	keys = append(keys, "writer")
	for _, k := range keys {
		v, ok, err := m.s.Meta(ctx, "mirror/"+from+"/"+k)
		if err != nil {
			return err
		}
		if ok {
			if err := m.s.SetMeta(ctx, "mirror/"+to+"/"+k, v); err != nil {
				return err
			}
		}
	}
	for _, k := range keys {
		if err := m.s.SetMeta(ctx, "mirror/"+from+"/"+k, nil); err != nil {
			return err
		}
	}
	m.o.Logger.Info("mirror: moved this store's writer to the blob store's converged id", "from", from, "to", to, "writer", w.ID, "seq", w.Seq)
	return nil
}
