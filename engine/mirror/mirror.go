package mirror

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror/internal/segment"
)

// Options configure a [Mirror]. nil means defaults.
type Options struct {
	// BatchVersions is the most versions export puts in one segment.
	// Default 5,000.
	BatchVersions int
	// BatchDelay is how long Run lets local changes gather before it
	// exports them. Default 2 s.
	BatchDelay time.Duration
	// ImportEvery is how often Run lists the blob store when no watcher
	// says anything changed; each time is a full rescan (the watcher is a
	// hint, F9), jittered by ±20%. Default 30 s.
	ImportEvery time.Duration
	// CompactAt: Run and Round compact when this writer has at least this
	// many live segments. Default 16; negative never.
	CompactAt int
	// CompactVersions is the most versions in one compacted segment.
	// Default 200,000.
	CompactVersions int
	// DeleteGrace is how long a compacted-away segment stays for readers
	// that listed it (F8). Default 0 (deleted as soon as the compacted
	// segment is durable); Run uses it as given.
	DeleteGrace time.Duration
	// FileGrace is how long a file copy of this writer's stays in the
	// blob store once no version the store holds whole names it, for
	// devices that still hold a version naming it (filetidy.go). Default
	// 10 min, as the store keeps its own files (docs/stores.md, Files).
	FileGrace time.Duration
	// Salvage reads objects a sync service renamed (conflict copies,
	// "name 2", F1) when the blob store offers them ([engine.BlobStrays]), and
	// admits what they hold if their content checks out. Default false.
	Salvage bool
	// Adopt takes the blob store as it is found when it is not the one
	// this store knew: another store id where this store mirrored before
	// (a folder emptied or gone and set up again, F10), or segments this
	// store saw gone (its own, or another writer's). The mirror then
	// starts over there — its export from the first change, what it read
	// of a vanished writer forgotten — where it would otherwise refuse
	// with [ErrBlobStoreChanged] or [ErrBlobStoreShrunk]. Default false.
	Adopt bool
	// GoneGrace is how long Run waits for a blob store that is gone (its
	// marker missing: a sync service remounting, a drive unplugged, F10)
	// or looks shrunk (a sync service delivering deletes before the
	// segments that replace them, F5), retrying with backoff and saying so
	// on Logger, before it stops with the error. It writes and deletes
	// nothing meanwhile. Default 1 h: sync clients restart, remount and
	// re-enumerate (File Provider) in minutes; an hour rides those out,
	// and still ends a run whose folder was really removed or unplugged
	// the same hour, with an error a person or a supervisor sees.
	GoneGrace time.Duration
	// Reread is how long a segment that fails its checks (checksum,
	// frame, zstd) is given before it is read again. One that fails with
	// identical bytes on two reads at least Reread apart is bad
	// ([ErrBadSegment]); one whose bytes changed is a file still arriving
	// (F4), retried later. Bad is not for good: a bad segment is read
	// again when it changes and on a later pass, so a good copy a sync
	// service delivers is taken in. Default 2 s, far longer than a sync
	// client pauses between writes to a file it is filling in place.
	Reread time.Duration
	// Logger gets progress and warnings. Default: discard.
	Logger *slog.Logger
	// Rand makes writer ids. Default crypto/rand.
	Rand io.Reader
	// Now is the clock for grace periods only; nothing is ordered by it.
	// Default time.Now.
	Now func() time.Time
	// Geneses, if set, carries each space's genesis beside the segments
	// (geneses.go): written before the segments that need it, kept before
	// a pass admits versions. Default nil: versions alone.
	Geneses Geneses
	// Progress, if set, is called after each segment read or written
	// (from the goroutine doing it, with the mirror busy: it must not call
	// the Mirror), for progress lines.
	Progress func(Stats)
}

func (o *Options) withDefaults() (Options, error) {
	var out Options
	if o != nil {
		out = *o
	}
	switch {
	case out.GoneGrace < 0:
		return out, fmt.Errorf("minca/mirror: Options.GoneGrace %v is negative", out.GoneGrace)
	case out.Reread < 0:
		return out, fmt.Errorf("minca/mirror: Options.Reread %v is negative", out.Reread)
	case out.DeleteGrace < 0:
		return out, fmt.Errorf("minca/mirror: Options.DeleteGrace %v is negative", out.DeleteGrace)
	case out.FileGrace < 0:
		return out, fmt.Errorf("minca/mirror: Options.FileGrace %v is negative", out.FileGrace)
	}
	if out.FileGrace == 0 {
		out.FileGrace = 10 * time.Minute
	}
	if out.GoneGrace == 0 {
		out.GoneGrace = time.Hour
	}
	if out.Reread == 0 {
		out.Reread = 2 * time.Second
	}
	if out.BatchVersions <= 0 {
		out.BatchVersions = 5000
	}
	if out.BatchDelay <= 0 {
		out.BatchDelay = 2 * time.Second
	}
	if out.ImportEvery <= 0 {
		out.ImportEvery = 30 * time.Second
	}
	if out.CompactAt == 0 {
		out.CompactAt = 16
	}
	if out.CompactVersions <= 0 {
		out.CompactVersions = 200_000
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	if out.Rand == nil {
		out.Rand = rand.Reader
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	return out, nil
}

// Mirror couples a [engine.Store] to a [engine.Blobs] in both directions (DESIGN,
// Segments, mirrors and compaction; 02 §4.5, §4.9, §9): Export writes new
// versions as this store's writer's next segments, Import admits the other
// writers' segments through the judge as a peer's versions, and Compact
// rewrites this writer's segments into fewer, superseded bodies as stubs.
//
// A writer creates and deletes only its own segments, and deletes only
// those it listed and read, after what replaces them is durable. Its id
// and sequence live in the store's meta values, never in the blob store.
// Two segments of our writer id that we did not both write mean the store
// was cloned (a restored disk image, F11): both are kept and read, the
// event is logged, and this store takes a new writer id.
//
// A Mirror's methods are safe for concurrent use; they run one at a time.
type Mirror struct {
	s *engine.Store
	b engine.Blobs
	o Options

	mu sync.Mutex
	// sid is the blob store's id, as the markers say (identity.go); the
	// mirror's state is kept under it. It changes only when a sync
	// service brings a copy of the marker with a smaller id.
	sid string
	// from is the source this mirror admits as, "blobs:" + sid: every
	// mirror of one blob store shares it, so a version any of them
	// imported is never written back there, and is written to the other
	// blob stores a store mirrors to. froms adds the ids the blob store
	// had before it converged on sid.
	from     string
	froms    map[string]bool
	bound    bool // bind ran
	codec    *segment.Codec
	w        *writerState
	failed   map[string]failure    // segments that did not read, by name
	bad      map[string]Problem    // segments found bad and not read since, by name
	salvaged map[string]int64      // strays read, by name: size
	maxSeq   map[string]uint64     // in memory: highest seq listed per writer
	rescan   bool                  // the next import lists everything
	reads    map[string]*readState // cached read states
	known    map[string]bool       // writers ever listed (F10: one vanishing is a loss)
	told     map[string]bool       // what was reported on Logger once (copies left)
	// genesesOut is the spaces whose genesis the blob store holds, as
	// listed at the first export that needed it and written since; nil:
	// not listed this export pass. genesesIn: this import pass kept the
	// geneses listed.
	genesesOut map[string]bool
	genesesIn  bool
	filesAt    *filesMark // the last files pass (filetidy.go); nil: none yet
	stats      Stats
}

// Stats count what a mirror did since it was made.
type Stats struct {
	Exported          int64 `json:"exported"`          // versions written in export segments
	FilesExported     int64 `json:"filesExported"`     // file chunks written (files.go)
	FilesImported     int64 `json:"filesImported"`     // files read whole and kept (files.go)
	FileChunksDeleted int64 `json:"fileChunksDeleted"` // own file chunks deleted, unnamed past FileGrace (filetidy.go)
	SegmentsWritten   int64 `json:"segmentsWritten"`   // export and compaction
	BytesWritten      int64 `json:"bytesWritten"`
	SegmentsRead      int64 `json:"segmentsRead"`
	SegmentsToRead    int64 `json:"segmentsToRead"` // listed to be read (SegmentsRead of them done): a progress line's total
	BytesRead         int64 `json:"bytesRead"`
	Admitted          int64 `json:"admitted"`    // versions handed to Admit
	Stored            int64 `json:"stored"`      // of them, new to the store
	Refused           int64 `json:"refused"`     // refused by the judge or not versions
	Unavailable       int64 `json:"unavailable"` // reads to retry: placeholders, torn files
	Bad               int64 `json:"bad"`         // times a segment was found bad (ErrBadSegment)
	Duplicates        int64 `json:"duplicates"`  // copies of our segments a sync service made, removed
	Salvaged          int64 `json:"salvaged"`    // strays whose content checked out
	Clones            int64 `json:"clones"`      // times our writer id was found cloned
	Geneses           int64 `json:"geneses"`     // geneses kept from the blob store (Options.Geneses)
	Compactions       int64 `json:"compactions"`
	Deleted           int64 `json:"deleted"` // own segments deleted after compaction
	BytesFreed        int64 `json:"bytesFreed"`
}

// Source is the source ([Change].From, Admit's from) under which a
// [Mirror] of the blob store with this id admits what it imports. It names
// the blob store, not the mirror: what one mirror imported, another mirror
// of the same blob store does not export back, even after a restart; a
// mirror of another blob store exports it.
func Source(storeID string) string { return "blobs:" + storeID }

// New makes a mirror of s into b. b must know its store id
// ([engine.BlobStoreID]); both backends here do.
func New(s *engine.Store, b engine.Blobs, opts *Options) (*Mirror, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	idb, ok := b.(engine.BlobStoreID)
	if !ok || !engine.ValidBlobComponent(idb.StoreID()) {
		return nil, errors.New("minca/mirror: the blob store has no store id")
	}
	c, err := segment.NewCodec(segment.Limits{})
	if err != nil {
		return nil, err
	}
	m := &Mirror{s: s, b: b, o: o, sid: idb.StoreID(), codec: c,
		failed: map[string]failure{}, bad: map[string]Problem{}, salvaged: map[string]int64{},
		maxSeq: map[string]uint64{}, reads: map[string]*readState{}, told: map[string]bool{}, rescan: true}
	m.from = Source(m.sid)
	m.froms = map[string]bool{m.from: true}
	return m, nil
}

// Close releases the mirror (not the store or the blob store).
func (m *Mirror) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.codec != nil {
		m.codec.Close()
		m.codec = nil
	}
}

// Writer returns this store's writer id in the blob store.
func (m *Mirror) Writer(ctx context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.loadWriter(ctx); err != nil {
		return "", err
	}
	return m.w.ID, nil
}

// Stats returns what the mirror did so far.
func (m *Mirror) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// StoreID returns the blob store's id as the mirror uses it: the
// smallest valid id among its markers when it last read them.
func (m *Mirror) StoreID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sid
}

// Round is one pass both ways: import (listing everything, so segments a
// sync service delivered out of order are found), export, then compaction
// when this writer has CompactAt segments or more, removal of what a sync
// service duplicated or brought back of this writer's segments and of the
// marker (tidy.go), deletion of what compaction replaced once its
// grace is over, and the files pass (filetidy.go) when the store changed
// since the last, a retired file copy's grace is over, or FileGrace went
// by. Bad segments ([ErrBadSegment]) stop nothing: the round
// does all of that and returns their error last.
func (m *Mirror) Round(ctx context.Context) error {
	m.mu.Lock()
	m.rescan = true // a round lists everything: what arrived out of order too
	m.mu.Unlock()
	_, bad := m.Import(ctx)
	if bad != nil && !errors.Is(bad, ErrBadSegment) {
		return bad
	}
	if _, err := m.Export(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	n := len(m.w.Own)
	m.mu.Unlock()
	if m.o.CompactAt > 0 && n >= m.o.CompactAt {
		if _, err := m.Compact(ctx); err != nil {
			return err
		}
	}
	if err := m.tidy(ctx); err != nil {
		return err
	}
	if err := m.sweep(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	due, err := m.filesDue(ctx)
	if err == nil && due {
		_, err = m.filesPass(ctx)
	}
	m.mu.Unlock()
	if err != nil {
		return err
	}
	return bad
}

// publish puts a segment of ours, recording it as pending first so a
// crash after the Put is recognised on restart. An existing object of the
// same name is fine when its bytes are ours (a retried upload whose first
// attempt landed, S3); anything else there means another writer with our
// id (F11).
func (m *Mirror) publish(ctx context.Context, data []byte, t *segment.Trailer, cursor uint64, replace []string) error {
	name := t.Name()
	m.w.Pending = &pendingSegment{ownSegment: ownSegment{Name: name, Seq: t.Seq, Count: t.Count, Size: int64(len(data))}, Cursor: cursor, Replace: replace}
	if err := m.saveWriter(ctx); err != nil {
		return err
	}
	err := m.b.Put(ctx, name, data)
	if errors.Is(err, engine.ErrBlobExists) {
		got, gerr := m.b.Get(ctx, name)
		if gerr != nil {
			return fmt.Errorf("minca/mirror: %s exists and cannot be read: %w", name, gerr)
		}
		if !bytes.Equal(got, data) {
			return fmt.Errorf("minca/mirror: %s exists with other content: %w", name, errClone)
		}
		err = nil
	}
	if err != nil {
		return fmt.Errorf("minca/mirror: publish: %w", err)
	}
	return m.adopt(ctx)
}

var errClone = errors.New("another writer uses this writer id")

// adopt makes the pending segment ours: it joins the live ones, its
// cursor is the export cursor, and what it replaces is retired.
func (m *Mirror) adopt(ctx context.Context) error {
	p := m.w.Pending
	if err := m.recordHash(ctx, p.Seq, p.Name[len(p.Name)-4-32:len(p.Name)-4]); err != nil {
		return err
	}
	if p.Seq > m.w.Seq {
		m.w.Seq = p.Seq
	}
	if p.Cursor > m.w.Cursor {
		m.w.Cursor = p.Cursor
	}
	if len(p.Replace) > 0 {
		gone := map[string]bool{}
		for _, n := range p.Replace {
			gone[n] = true
			m.w.Retired = append(m.w.Retired, retired{Name: n, At: m.o.Now().UnixMilli()})
		}
		own := m.w.Own[:0]
		for _, s := range m.w.Own {
			if !gone[s.Name] {
				own = append(own, s)
			}
		}
		m.w.Own = own
		m.stats.Compactions++
	}
	m.w.Own = append(m.w.Own, p.ownSegment)
	m.w.Pending = nil
	m.stats.SegmentsWritten++
	m.stats.BytesWritten += p.Size
	if m.o.Progress != nil {
		m.o.Progress(m.stats)
	}
	return m.saveWriter(ctx)
}

// resolvePending settles a publish a crash interrupted: if the segment is
// in the blob store it is ours, else it never was.
func (m *Mirror) resolvePending(ctx context.Context) error {
	p := m.w.Pending
	if p == nil {
		return nil
	}
	_, err := m.b.Get(ctx, p.Name)
	switch {
	case err == nil:
		return m.adopt(ctx)
	case errors.Is(err, engine.ErrBlobNotFound):
		m.w.Pending = nil
		return m.saveWriter(ctx)
	default:
		return fmt.Errorf("minca/mirror: pending %s: %w", p.Name, err)
	}
}

// rotate leaves a cloned writer id for a new one. The segments under the
// old id stay, and are read from now on like any other writer's.
func (m *Mirror) rotate(ctx context.Context, why string) error {
	old := m.w.ID
	id, err := segment.NewWriterID(m.o.Rand)
	if err != nil {
		return err
	}
	m.o.Logger.Warn("mirror: writer id cloned; taking a new one (F11)", "old", old, "new", id, "why", why)
	m.stats.Clones++
	clones := append(m.w.Clones, old)
	m.w = &writerState{ID: id, Cursor: m.w.Cursor, Clones: clones}
	m.rescan = true
	return m.saveWriter(ctx)
}

// sweep deletes compacted-away segments whose grace is over.
func (m *Mirror) sweep(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.w == nil || len(m.w.Retired) == 0 {
		return nil
	}
	now := m.o.Now().UnixMilli()
	keep := m.w.Retired[:0]
	for _, r := range m.w.Retired {
		if now-r.At < m.o.DeleteGrace.Milliseconds() {
			keep = append(keep, r)
			continue
		}
		if err := m.b.Delete(ctx, r.Name); err != nil {
			return fmt.Errorf("minca/mirror: delete %s: %w", r.Name, err)
		}
		m.stats.Deleted++
		m.stats.BytesFreed += r.Size
	}
	m.w.Retired = keep
	return m.saveWriter(ctx)
}

// DecodeSegment checks a whole segment (checksum, trailer, limits) and
// returns its lines, each one version's canonical JSON as it travels. Any
// defect is an error; it never panics (DESIGN, Segments).
func DecodeSegment(data []byte) ([][]byte, error) {
	c, err := segment.NewCodec(segment.Limits{})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	s, err := c.Decode(data)
	if err != nil {
		return nil, err
	}
	return s.Lines, nil
}
