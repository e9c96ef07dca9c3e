package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// Options configures a [Store]. The zero value (or nil) is the defaults.
type Options struct {
	// Judge decides what is kept (02 §9). Without one, Admit and
	// SetStanding fail; everything that reads works.
	Judge Judge
	// MaxWaiting bounds the versions held aside as later (02 §9.5), from
	// every source. Past it the oldest of the bounded source holding the
	// most bytes are dropped, or the oldest of all when no bounded source
	// holds any, as if never received: they were never acknowledged as
	// stored, and come again when a peer resends them. Default
	// DefaultMaxWaiting (100,000).
	MaxWaiting int
	// Waiting bounds in bytes and in time the waiting versions of bounded
	// sources (a node's peers). The zero value is the defaults.
	Waiting WaitingLimits
	// Now is the clock waiting versions' arrival and age are read from.
	// Default time.Now.
	Now func() time.Time
	// MaxRefusals bounds the (peer, id) refusals remembered, in memory
	// only; the oldest half is forgotten when full. Default 100,000.
	MaxRefusals int
	// Workers is how many goroutines run Judge.Check at once. Default
	// GOMAXPROCS.
	Workers int
	// CacheSize is how many recently stored envelopes admission keeps in
	// memory for the judge's chain checks. Default 8,192.
	CacheSize int
	// CacheBytes bounds the same envelopes by their bytes as stored
	// (envelope and body), whatever their number: a version naming many
	// files (02 §3.1) or with a large body costs several times those
	// bytes decoded, and 8,192 of them would hold hundreds of MB.
	// Default DefaultCacheBytes.
	CacheBytes int64
	// Indexer, when set, keeps indexes of records' readable current
	// versions in the same batches (indexer.go). Default none.
	Indexer Indexer
	// Files is where the bytes of files are kept (files.go). Default in
	// memory.
	Files FileDir
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.MaxWaiting <= 0 {
		out.MaxWaiting = DefaultMaxWaiting
	}
	out.Waiting = out.Waiting.withDefaults()
	if out.Now == nil {
		out.Now = time.Now
	}
	if out.MaxRefusals <= 0 {
		out.MaxRefusals = 100_000
	}
	if out.Workers <= 0 {
		out.Workers = runtime.GOMAXPROCS(0)
	}
	if out.CacheSize <= 0 {
		out.CacheSize = 8192
	}
	if out.CacheBytes <= 0 {
		out.CacheBytes = DefaultCacheBytes
	}
	if out.Files == nil {
		out.Files = NewMemoryFiles()
	}
	return out
}

// Store is the version store (DESIGN.md, The engine). Its methods are safe
// for concurrent use; writes (Admit, SetStanding, PutFile, SetMeta) are made
// one at a time.
type Store struct {
	// kv is the backend with its reads counted (reads.go), raw the
	// backend itself, asked what else it can do (ImportBatcher, …).
	kv  KV
	raw KV
	// calls and reads are what Close waits for: the calls in progress,
	// then the reads of kv still open (reads.go).
	calls gate
	reads gate
	opts  Options

	// mu serializes writers: deciding a batch, SetStanding, PutFile,
	// SetMeta, Close. It guards inflight.
	mu sync.Mutex
	// inflight is the last batch decided, which may still be committing.
	inflight *tx
	// fill is what the store knows of the space a Filling fills, while
	// that source's batches are the only ones decided (filling.go).
	fill *fillState
	// applied counts the batches committed to the KV (Store.write): what
	// was read ahead for a batch is good while it has not moved, or has
	// moved by one batch whose keys are known (lastApplied).
	applied     atomic.Uint64
	lastApplied atomic.Pointer[appliedBatch]
	// spareWrites holds the write maps of committed batches no longer
	// read (tx.w, see begin), for the batches after to reuse.
	spareWrites sync.Pool
	// state guards what committed batches made known: st, cache, spaces.
	state  sync.Mutex
	st     counters
	cache  heldCache
	spaces map[string]bool // spaces known registered
	closed atomic.Bool

	refusals refusalSet
	subs     subscribers

	// srcs is what each source has waiting, as committed (guarded by
	// state); lastSweep is when admission last looked for waiting
	// versions past their age (guarded by mu).
	srcs      map[[32]byte]source
	lastSweep time.Time

	// partials are the files an OpenPartial has open; fileKept is closed
	// when a file is next recorded, fileNamed when a version next names a
	// file not held (all guarded by state).
	partials  map[canonical.ID]bool
	fileKept  signal
	fileNamed signal
	// recording gathers files to record as held into one synced batch.
	recording recordGroup
	// filesUnindexed: the store is of an earlier layout, open read-only,
	// so it has no files index (upgrade.go); MissingFiles reads versions.
	filesUnindexed bool
	// unreclaimed is the bytes of waiting versions dropped since the
	// waiting entries were last reclaimed (reclaimDropped); only the
	// batch writing touches it, and batches write one after another.
	unreclaimed int64
	// groups holds VersionsStored's readers (*storedGroup) with their
	// buffers, used again by the next call rather than grown anew.
	groups sync.Pool
}

func (s *Store) now() time.Time { return s.opts.Now() }

// counters are the engine's own durable state, kept under '_state' and
// rewritten in every batch.
type counters struct {
	changeSeq uint64
	waitSeq   uint64
	// logPrev counts 'L' entries: versions whose log.prev is not held.
	// While it is 0, storing a version needs no look-up for them.
	logPrev uint64
	// vseq is the last version stored's place in 'v'.
	vseq uint64
	// recs is the last record number given (layout 18 on): a record
	// first stored takes the next, in the batch that stores it, so a
	// number is never given twice (history.go).
	recs  uint64
	stats Stats
	// index is the layout of the Indexer the index table was kept under
	// by every batch since it was built; "" when none (indexer.go).
	index string
	// waitBounded is the bytes waiting from bounded sources (in memory
	// only: which sources are bounded is Options'). from is the layout
	// the store was in when opened (upgrade.go).
	waitBounded int64
	from        uint64
}

const stateName = "state"

// layout is the version of the key layout and values this engine writes,
// kept in the counters. A store in an earlier layout is refused with
// ErrLayout: 1 kept whether a version is whole in its history entry and
// one change log entry per change; 2 kept record heads under 'c'; 3 kept
// versions by id, bodies apart; 4 kept no change's source; 5 kept no
// versions by root; 6 kept no waiting version's source, arrival and size
// ('Q'); 7 kept no files index ('n', 'N'). 6 and 7 are brought up to this
// layout when opened (upgrade.go); 8 kept change log entries without what
// each batch left (Change.Facts), and they are read as they are, as are
// those of 6 and 7, while the next batch writes the store in this layout;
// 9 is layout 10 with every value kept as the engine wrote it, read as
// it is: 10 lets a backend keep values compressed (backends/sqlite does),
// which an engine reading 9 would take for damage; 10 and before kept the
// value of a record's first standing version both in 'v' and in its head,
// and such values are read as they are until the record next changes
// (since 11 the head is its only home, current_home.go); 11 and before
// named each version in the index by root ('a') by its digest, and such
// entries are read as they are beside those that name it by vseq; 12 and
// before named the versions at a place of a writer's line ('l') by
// digest, and such a place is read as it is until a version is added at
// it, when it is written again by vseq (lines.go); 13 and before named
// the versions of each change in the change log ('g') by digest, and such
// entries are read as they are beside those that name them by vseq
// (changelog.go); 14 and before named each version in its record's
// history ('h' rec order …) by its id's text, and such an entry is read
// as it is until its standing changes, when it is written again by vseq
// (history.go); 11 to 15 kept the value of a record's first standing
// version in its head alone, its 'v' a marker naming the record, and such
// a head is read as it is until the record next changes, when its value
// goes back to 'v' (since 16 the head names it, current_home.go); 16 and
// before kept each sync-order entry ('o') as its version's collection
// alone, and such an entry is read as it is, its version looked up by id
// when asked for (since 17 it names the version's vseq too,
// order_value.go); 17 and before kept a record's history entries under
// its key ('h' rec order …), and such a record's entries stay there, read
// as they are, its head naming no number (since 18 a record first stored
// takes a number its head names, its entries under 'H' num …,
// history.go).
const layout = 18

// filesIndexed is the first layout with the files index: a store in it or
// later needs no upgrade.
const filesIndexed = 8

// upgradable is the earliest layout Open brings up to this one.
const upgradable = 6

// ErrLayout: the store was written in a key layout this engine does not
// read (export it with the minca that wrote it and import it again).
var ErrLayout = errors.New("minca/engine: the store is in another key layout")

func (c *counters) encode() []byte {
	b := binary.AppendUvarint(nil, layout)
	b = binary.AppendUvarint(b, c.changeSeq)
	b = binary.AppendUvarint(b, c.waitSeq)
	s := &c.stats
	for _, n := range []int64{s.Spaces, s.Versions, s.Whole, s.Stubs, s.Waiting, s.BodyBytes, s.EnvelopeBytes, s.Files, s.FileBytes} {
		b = binary.AppendVarint(b, n)
	}
	b = binary.AppendUvarint(b, c.logPrev)
	b = binary.AppendUvarint(b, c.vseq)
	for _, n := range []int64{s.WaitingBytes, s.WaitingDropped, s.WaitingExpired} {
		b = binary.AppendVarint(b, n)
	}
	b = append(binary.AppendUvarint(b, uint64(len(c.index))), c.index...)
	return binary.AppendUvarint(b, c.recs)
}

func decodeCounters(b []byte) (counters, error) {
	var c counters
	next := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	l := next()
	c.from = l
	if l < upgradable || l > layout {
		if l >= 1 && l < layout {
			return c, fmt.Errorf("%w: layout %d, written by an earlier minca; this one reads layout %d", ErrLayout, l, layout)
		}
		if l > layout && l < 64 {
			return c, fmt.Errorf("%w: layout %d, written by a later minca; this one reads layouts %d to %d", ErrLayout, l, upgradable, layout)
		}
		return c, Errorf(ErrCorrupt, "damaged: engine state has an unknown layout")
	}
	c.changeSeq = next()
	c.waitSeq = next()
	s := &c.stats
	for _, p := range []*int64{&s.Spaces, &s.Versions, &s.Whole, &s.Stubs, &s.Waiting, &s.BodyBytes, &s.EnvelopeBytes, &s.Files, &s.FileBytes} {
		v, n := binary.Varint(b)
		if n <= 0 {
			return c, Errorf(ErrCorrupt, "damaged: engine state is short")
		}
		*p = v
		b = b[n:]
	}
	c.logPrev = next()
	c.vseq = next()
	if c.from > 6 { // layout 6 kept no waiting bytes, dropped or expired
		for _, p := range []*int64{&s.WaitingBytes, &s.WaitingDropped, &s.WaitingExpired} {
			v, n := binary.Varint(b)
			if n <= 0 {
				return c, Errorf(ErrCorrupt, "damaged: engine state is short")
			}
			*p = v
			b = b[n:]
		}
	}
	c.stats.Changes = int64(c.changeSeq)
	if n := next(); n > 0 && n <= uint64(len(b)) { // absent before indexers: no index
		c.index = string(b[:n])
		b = b[n:]
	}
	c.recs = next() // absent before layout 18: no number given
	return c, nil
}

// Open opens the engine on kv, which it owns from then on (Close closes it).
func Open(kv KV, opts *Options) (*Store, error) {
	s := &Store{raw: kv, opts: opts.withDefaults()}
	s.kv = countedKV{KV: kv, r: &s.reads}
	s.cache.size, s.cache.bytes = s.opts.CacheSize, s.opts.CacheBytes
	s.refusals.size = s.opts.MaxRefusals
	b, err := kv.Get(keys.InternalKey(stateName))
	switch {
	case err == nil:
		s.st, err = decodeCounters(b)
		if err != nil {
			return nil, err
		}
	case errors.Is(err, ErrNotFound):
		s.st.from = layout // a new store
	case named(err) != nil:
		return nil, err // the backend's error names the store and what is wrong
	default:
		return nil, fmt.Errorf("minca/engine: open: %w", err)
	}
	if s.st.from < filesIndexed {
		err = s.upgrade()
	} else {
		err = s.loadSources()
	}
	if err == nil {
		err = s.tidyWaiting()
	}
	if err != nil {
		return nil, err
	}
	if err := s.moveOldFiles(); err != nil {
		return nil, err
	}
	if s.opts.Indexer == nil {
		s.st.index = "" // the next batch leaves any index table behind
	} else if err := s.reindexIfNeeded(context.Background()); err != nil {
		return nil, err
	}
	return s, nil
}

// ImportBatch is how many versions one batch of a bulk import holds on
// this store's KV: what its backend says (ImportBatcher), else
// DefaultImportBatch (DESIGN.md, Backends). A batch is one synced
// commit, so the size is the backend's trade of commits against memory.
func (s *Store) ImportBatch() int {
	if b, ok := s.raw.(ImportBatcher); ok && b.ImportBatch() > 0 {
		return b.ImportBatch()
	}
	return DefaultImportBatch
}

// Close closes the store and its KV. A call made after it begins fails
// with ErrClosed; the calls in progress end first, and the batch
// committing. Close waits for them however long they take: a long read
// stops at its next step with ErrClosed, and the KV is never closed under
// a call.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	// A call holds no lock of the store's while Close waits for it, and
	// one writing takes mu: Close takes it after them. A read the calls
	// left open (an index iterator) is waited for next: closed under one,
	// the KV would fail it and report it.
	s.calls.shut()
	s.reads.shut()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	s.subs.closeAll()
	return s.kv.Close()
}

// check is ErrClosed once Close has begun: a write that takes mu checks
// it once it holds mu, as Close closes the KV holding it.
func (s *Store) check() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// cached returns a held version from the cache of recently stored ones.
func (s *Store) cached(d canonical.ID) (*record.Version, bool) {
	s.state.Lock()
	defer s.state.Unlock()
	return s.cache.get(d)
}

// knownSpace reports whether a committed batch registered space.
func (s *Store) knownSpace(space string) bool {
	s.state.Lock()
	defer s.state.Unlock()
	return s.spaces[space]
}

// Stats returns the counts of what the store holds.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	if err := s.enter(); err != nil {
		return Stats{}, err
	}
	defer s.leave()
	s.state.Lock()
	defer s.state.Unlock()
	return s.st.stats, nil
}

// Version returns a held version as it is held: whole, or a stub when it was
// superseded and not retained (02 §4.5). A waiting version is not held:
// ErrNotFound.
func (s *Store) Version(ctx context.Context, id canonical.ID) (*record.Version, error) {
	raw, err := s.VersionJSON(ctx, id)
	if err != nil {
		return nil, err
	}
	v, err := record.Decode(raw)
	if err != nil {
		return nil, Errorf(ErrCorrupt, "damaged: stored version %s: %v", id, err)
	}
	return v, nil
}

// VersionJSON is [Store.Version] as canonical JSON, read without parsing.
func (s *Store) VersionJSON(ctx context.Context, id canonical.ID) ([]byte, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	return readWhole(s.kv, id)
}

func readWhole(r Reader, d canonical.ID) ([]byte, error) {
	_, env, body, err := readVersion(r, d)
	if err != nil {
		return nil, err
	}
	return joinWhole(env, body)
}

// readVersion reads a held version's vseq, stored envelope and body (nil
// for a stub); ErrNotFound when it is not held.
func readVersion(r Reader, d canonical.ID) (uint64, []byte, []byte, error) {
	sb, err := r.Get(keys.IDKey(d))
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return 0, nil, nil, fmt.Errorf("%w: version %s", ErrNotFound, d)
		}
		return 0, nil, nil, err
	}
	vseq, err := decodeVseq(sb)
	if err != nil {
		return 0, nil, nil, err
	}
	vb, err := r.Get(keys.VersionKey(vseq))
	if err != nil {
		return 0, nil, nil, Errorf(ErrCorrupt, "damaged: version %s has no value at %d: %v", d, vseq, err)
	}
	env, body, err := readValue(r, vseq, vb)
	return vseq, env, body, err
}

// Current returns the readable current version of a record (02 §4.3,
// §9.5): in §4.3 order, the first held version that stands, when it is
// whole. A delete is returned as it is: the record's current version is a
// delete. ErrNotFound when the record is not held, none of its versions
// stands, or the one that reads is a stub whose body has not arrived (§4.5:
// "until then the record reads as not held").
func (s *Store) Current(ctx context.Context, space, key string) (*record.Version, error) {
	raw, err := s.CurrentJSON(ctx, space, key)
	if err != nil {
		return nil, err
	}
	v, err := record.Decode(raw)
	if err != nil {
		return nil, Errorf(ErrCorrupt, "damaged: stored version of %s: %v", key, err)
	}
	return v, nil
}

// CurrentJSON is [Store.Current] as canonical JSON, read without parsing.
func (s *Store) CurrentJSON(ctx context.Context, space, key string) ([]byte, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	hk := keys.HeadKey(keys.Rec(space, key))
	var last []byte
	for {
		hb, err := s.kv.Get(hk)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				return nil, fmt.Errorf("%w: record %s in space %s", ErrNotFound, key, space)
			}
			return nil, err
		}
		h, err := decodeHead(hb)
		if err != nil {
			return nil, err
		}
		if !h.hasFirst || !h.firstH.whole {
			return nil, fmt.Errorf("%w: record %s in space %s has no readable current version", ErrNotFound, key, space)
		}
		if h.inHead {
			return joinWhole(h.firstEnv, h.firstBody)
		}
		cb, err := s.kv.Get(keys.CurrentKey(h.firstV))
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		if err == nil {
			env, body, err := splitVersion(cb)
			if err != nil {
				return nil, err
			}
			if body != nil || h.firstH.deleted {
				return joinWhole(env, body)
			}
		}
		// The two reads are no snapshot: a batch between them moved the
		// record on and its value out of 'c' (or it took its body since).
		// The head read again says which; the same head twice is damage.
		if bytes.Equal(hb, last) {
			return nil, Errorf(ErrCorrupt, "damaged: record %s: its current version %s is not whole at %d", key, h.first, h.firstV)
		}
		last = bytes.Clone(hb)
	}
}

// History lists every held version of a record, newest first by 02 §4.3,
// stubs as stubs, each with its standing.
func (s *Store) History(ctx context.Context, space, key string) ([]Held, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	rec := keys.Rec(space, key)
	hb, err := s.kv.Get(keys.HeadKey(rec))
	if errors.Is(err, ErrNotFound) {
		return []Held{}, nil // no version of the record is held
	}
	if err != nil {
		return nil, err
	}
	h, err := decodeHead(hb)
	if err != nil {
		return nil, err
	}
	p := histPrefix(rec, h.num)
	it, err := s.kv.NewIter(p, keys.PrefixEnd(p))
	if err != nil {
		return nil, err
	}
	var rows []histRow
	for it.Next() {
		if h.num == 0 && keys.IsHead(it.Key()) {
			continue
		}
		r, err := histRowOf(bytes.Clone(it.Key()), it.Value(), s.idOfVersionValue)
		if err != nil {
			it.Close()
			return nil, err
		}
		rows = append(rows, r)
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		return nil, err
	}
	inHistoryOrder(rows)
	out := make([]Held, 0, len(rows))
	for _, r := range rows {
		v, err := s.Version(ctx, r.d)
		if err != nil {
			return nil, err
		}
		st := Whole
		if v.IsStub() {
			st = Stub
		}
		out = append(out, Held{Version: v, Verdict: r.e.verdict, Stored: st})
	}
	return out, nil
}

// Standing returns a held version's standing (Stands or Withdrawn) and how
// it is held; ErrNotFound when it is not held.
func (s *Store) Standing(ctx context.Context, id canonical.ID) (Verdict, Storage, error) {
	if err := s.enter(); err != nil {
		return Refused, None, err
	}
	defer s.leave()
	vseq, env, body, err := readVersion(s.kv, id)
	if err != nil {
		return Refused, None, err
	}
	v, err := decodeHeld(env, nil)
	if err != nil {
		return Refused, None, err
	}
	e, err := histEntryIn(s.kv, v, vseq)
	if err != nil {
		return Refused, None, err
	}
	st := Whole
	if body == nil && !e.deleted {
		st = Stub
	}
	return e.verdict, st, nil
}

// Spaces lists the spaces the store holds versions of.
func (s *Store) Spaces(ctx context.Context) ([]string, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	p := []byte{keys.Space}
	it, err := s.kv.NewIter(p, keys.PrefixEnd(p))
	if err != nil {
		return nil, err
	}
	var out []string
	for it.Next() {
		out = append(out, string(it.Value()))
	}
	return out, errors.Join(it.Err(), it.Close())
}

// Meta returns a small durable value kept beside the store's state (a
// mirror's writer id, say); ok is false when there is none.
func (s *Store) Meta(ctx context.Context, name string) ([]byte, bool, error) {
	if err := s.enter(); err != nil {
		return nil, false, err
	}
	defer s.leave()
	b, err := s.kv.Get(keys.MetaKey(name))
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// SetMeta stores a meta value durably; nil deletes it.
func (s *Store) SetMeta(ctx context.Context, name string, value []byte) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	b, err := s.kv.NewBatch()
	if err != nil {
		return err
	}
	defer b.Close()
	if value == nil {
		err = b.Delete(keys.MetaKey(name))
	} else {
		err = b.Set(keys.MetaKey(name), bytes.Clone(value))
	}
	if err != nil {
		return err
	}
	return b.Commit(Sync)
}
