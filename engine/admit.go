package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// Refusal codes the store itself gives, for what no judge should let
// through but the key layout cannot hold.
const (
	CodeStoreID    = "store/id"    // the id is not a content id in its canonical text
	CodeStoreSpace = "store/space" // a version with no space (a loose one, 02 §3.5) is not stored
)

// ErrNoJudge: a write was asked of a store opened without a judge.
var ErrNoJudge = errors.New("minca/engine: the store was opened without a judge")

// Admit takes in a batch of versions from one source (a peer, a folder, an
// import; from names it for the refusals remembered). Each goes through the
// judge — Check on every core, then Decide in order — and everything is
// committed in one atomic batch, synced, before Admit returns (02 §9). It
// returns one Outcome per version, in order. Versions waiting for what
// another version of the batch brings are re-judged in the same batch, so
// their outcome is final.
//
// Admitting a version already held changes nothing, except that a whole
// copy of a held stub adds its body when that version is current or
// retained (02 §4.5). Calls may overlap: the checks of one run while
// another commits.
func (s *Store) Admit(ctx context.Context, from string, vs []*record.Version) ([]Outcome, error) {
	p, err := s.Prepare(ctx, vs)
	if err != nil {
		return nil, err
	}
	return s.AdmitPrepared(ctx, from, p)
}

// Prepared is a batch whose stateless checks ([Judge.Check]) have run:
// [Store.Prepare] makes one without taking the store's write lock, so a
// caller can check the next batch while [Store.AdmitPrepared] commits this
// one.
type Prepared struct {
	vs      []*record.Version
	outs    []Outcome
	checked []Checked
	refused []bool
	enc     []encoded
	// ahead is what [Store.ReadAhead] read for the batch.
	ahead *Ahead
	// before is waited for before the batch commits (Prepared.Before).
	before func() error
	// fill is the source filling a space the batch is of (Prepared.Fill).
	fill *Filling
}

// Prepare runs Judge.Check over vs on every core (Options.Workers), and
// encodes what storing each version that passes needs.
func (s *Store) Prepare(ctx context.Context, vs []*record.Version) (*Prepared, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	j := s.opts.Judge
	if j == nil {
		return nil, ErrNoJudge
	}
	p := &Prepared{vs: vs, outs: make([]Outcome, len(vs)), checked: make([]Checked, len(vs)), refused: make([]bool, len(vs)),
		enc: make([]encoded, len(vs))}
	errs := make([]error, len(vs))
	s.checkAll(ctx, j, vs, p, errs)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, err := range errs {
		p.outs[i].ID = vs[i].ID
		if err == nil {
			continue
		}
		var r *record.Refusal
		if !errors.As(err, &r) {
			return nil, fmt.Errorf("minca/engine: admit: checking %s: %w", vs[i].ID, err)
		}
		p.outs[i] = Outcome{ID: vs[i].ID, Verdict: Refused, Refusal: r}
		p.refused[i] = true
	}
	return p, nil
}

// AdmitPrepared is the rest of [Store.Admit]: the judge's Decide in order
// and one synced commit. A Prepared is admitted once. It is
// [Store.Submit] and [Admission.Wait].
func (s *Store) AdmitPrepared(ctx context.Context, from string, p *Prepared) ([]Outcome, error) {
	a, err := s.Submit(ctx, from, p)
	if err != nil {
		return nil, err
	}
	return a.Wait()
}

// decide runs the judge's Decide over a prepared batch, in order, into t.
func (t *tx) decide(from string, p *Prepared) error {
	vs, outs, checked, refused := p.vs, p.outs, p.checked, p.refused
	t.outs = outs
	if t.st.stats.Waiting > 0 && t.s.sweepDue(t.now) {
		if err := t.expire(); err != nil {
			return fmt.Errorf("minca/engine: admit: dropping expired waiting versions: %w", err)
		}
	}
	if err := t.readAheadFor(p); err != nil {
		return fmt.Errorf("minca/engine: admit: %w", err)
	}
	for i, v := range vs {
		if refused[i] {
			continue
		}
		if err := t.admitOne(i, v, checked[i], &p.enc[i], from); err != nil {
			return fmt.Errorf("minca/engine: admit %s: %w", v.ID, err)
		}
	}
	for i := range outs {
		o, e := &outs[i], &p.enc[i]
		if v := o.Verdict; (v == Stands || v == Withdrawn) && e.ok && e.rec != nil {
			if st, ok := t.final[e.d]; ok {
				o.Stored = st
			}
			if to, ok := t.restood[e.d]; ok && to != v {
				o.Verdict, o.Refusal = to, nil
			}
			if err := t.after(o, e, vs[i]); err != nil {
				return fmt.Errorf("minca/engine: admit %s: %w", vs[i].ID, err)
			}
		}
		if o.Verdict == Refused {
			if d, ok := vs[i].Digest(); ok {
				t.refused = append(t.refused, refusal{from, d})
			}
		}
	}
	return nil
}

// after fills in what an outcome says of the store once the batch is in:
// whether the version is its record's top, and whether its writer's line
// has a hole before it. A version the batch stored had its log.prev
// looked up as it was stored (line); a copy already held has it looked up
// here.
func (t *tx) after(o *Outcome, e *encoded, v *record.Version) error {
	h, ok, err := t.head(e.rec)
	if err != nil {
		return err
	}
	o.Top = ok && h.top == e.d
	if v.Log == nil || v.Log.N == 0 {
		return nil
	}
	pd, isID := v.LogPrevDigest()
	switch {
	case !isID:
	case o.New:
		_, gapped := t.gaps[e.d]
		o.Gap = gapped && t.stored[pd] == nil
	default:
		_, held, err := t.envelope(pd)
		if err != nil {
			return err
		}
		o.Gap = !held
	}
	return nil
}

// readAheadFor reads from the store, in one sorted pass, the keys that
// admitting p will look up: whether each version is held (or waiting), its
// record's head, its place in its writer's line, and the versions it
// names that are not in memory — unless what was read for p before it
// was submitted ([Store.ReadAhead]) was taken by Submit.
func (t *tx) readAheadFor(p *Prepared) error {
	if len(t.ahead) > 0 {
		// Read before it was submitted: a key left out (one the batch
		// committed since wrote, or one the counters now ask for) is read
		// as it is looked up.
		return nil
	}
	var prevStored map[canonical.ID]*record.Version
	if t.prev != nil {
		prevStored = t.prev.stored
	}
	var known func(v *record.Version, k []byte) bool
	if t.fill != nil {
		known = t.fill.absent
	}
	ks, absent := t.s.aheadKeys(p.vs, func(i int) (canonical.ID, []byte, bool) {
		e := &p.enc[i]
		return e.d, e.rec, !p.refused[i] && e.ok && e.rec != nil
	}, prevStored, t.st.stats.Waiting > 0, t.st.logPrev > 0, nil, nil, known)
	if len(absent) > 0 {
		if t.ahead == nil {
			t.ahead = make(map[string]ahead, len(ks)+len(absent))
		}
		for _, k := range absent {
			t.ahead[frozen(k)] = aheadMissing
		}
	}
	return t.readAhead(ks)
}

// aheadKeys are the keys admitting vs looks up (readAheadFor): of each
// version enc gives its digest and record (keys.Rec), false for one not
// to admit; waiting and logPrev say whether the store has waiting
// versions and log.prev entries to look for. free are line places known
// free (nil: none): the ids at them, and the heads of the fresh records
// (fresh[i]) among them, are known absent (ReadAheadFresh) and put in
// absent, not in what is returned. known, when not nil, tells of a
// version's own keys (its id, its head, its line place) those known
// absent (a Filling's, filling.go): put in absent too.
//
// The keys returned are made once, in an arena of their own, and never
// changed after: a map of what was read keys them by frozen(k).
func (s *Store) aheadKeys(vs []*record.Version, enc func(i int) (canonical.ID, []byte, bool), prevStored map[canonical.ID]*record.Version, waiting, logPrev bool, free map[string]bool, fresh []bool, known func(v *record.Version, k []byte) bool) (ks, absent [][]byte) {
	ks = make([][]byte, 0, 4*len(vs))
	if known != nil {
		absent = make([][]byte, 0, 3*len(vs)) // an id, a head, a line place each
	}
	type digested struct {
		d   canonical.ID
		rec []byte
		ok  bool
	}
	ds := make([]digested, len(vs))
	inBatch := make(map[canonical.ID]bool, len(vs))
	for i := range vs {
		e := &ds[i]
		if e.d, e.rec, e.ok = enc(i); e.ok {
			inBatch[e.d] = true
		}
	}
	// An id, a head and a line place each: some 200 bytes.
	ar := keyArena{first: 256 * len(vs)}
	own := func(k []byte) []byte { return keyBytes(ar.own(k)) }
	named := func(d canonical.ID, ok bool) {
		if ok && !inBatch[d] {
			if prevStored[d] != nil {
				return
			}
			if _, ok := s.cached(d); !ok {
				ks = append(ks, own(keys.AppendIDKey(ar.tail(), d)))
			}
		}
	}
	read := func(v *record.Version, k []byte) {
		if known != nil && known(v, k) {
			absent = append(absent, k)
		} else {
			ks = append(ks, k)
		}
	}
	for i, v := range vs {
		d, rec, ok := ds[i].d, ds[i].rec, ds[i].ok
		if !ok {
			continue
		}
		id := own(keys.AppendIDKey(ar.tail(), d))
		head := own(keys.AppendHeadKey(ar.tail(), rec))
		switch {
		case v.Log == nil:
			read(v, id)
			read(v, head)
		case len(free) > 0:
			// free holds the places it found free, which are not read.
			place := keys.AppendLinePlaceTag(ar.tail(), keys.RecTag(rec), v.Author, v.Collection, v.Log.N)
			if !free[string(place)] {
				place = own(place)
				ks = append(ks, id, head, place)
				break
			}
			// A version found held is compared with its record's head:
			// a head is known absent only with the id.
			absent = append(absent, id)
			if i < len(fresh) && fresh[i] && v.Seq == 0 {
				absent = append(absent, head)
			} else {
				ks = append(ks, head)
			}
		default:
			read(v, id)
			read(v, head)
			read(v, own(keys.AppendLinePlaceTag(ar.tail(), keys.RecTag(rec), v.Author, v.Collection, v.Log.N)))
		}
		if waiting {
			ks = append(ks, keys.WaitKey(d))
		}
		if logPrev {
			ks = append(ks, keys.LogPrevKey(d))
		}
		if v.Seq > 0 {
			named(v.PrevDigest())
			if v.Genesis != v.Prev {
				named(v.GenesisDigest())
			}
		}
	}
	return ks, absent
}

// Ahead is what admitting some versions will look up in the store, read
// before they are submitted ([Store.ReadAhead]).
type Ahead struct {
	m  map[string]ahead
	at uint64 // the count of the store's commits it was read at (Store.applied)
}

// ReadAhead reads from the store what admitting vs will look up, before
// they are checked and submitted — when their ids are fixed and they are
// not yet signed, say, or beside the decision of the batch before — so
// that deciding them, one batch at a time, does not wait on the reads.
// Give it to the batch's [Prepared] with [Prepared.ReadAhead]: it is used
// only if the store committed nothing between the reads and the batch's
// decision (the batch decided just before, still committing then, is
// read through in memory); else what it read is read again as the batch
// is decided.
func (s *Store) ReadAhead(vs []*record.Version) (*Ahead, error) {
	return s.ReadAheadFresh(vs, nil)
}

// ReadAheadFresh is [Store.ReadAhead] for versions some of which are the
// first of a record whose key their writer drew at random (fresh[i], 02
// §4.1: 16 random bytes, a key no record has yet). fresh may be nil.
//
// A version's id is not read when its place in its writer's line is found
// free (freeLinePlaces): the store writes a version's id and its line
// place in the same batch (tx.put, tx.line), both from its signed part, so
// a free place means the id is not held (store check names a held version
// without its place as damage). A fresh record's head is not read either
// when its version's id is not: a version found held is compared with its
// head. The writer alone can tell a fresh key; one named fresh that is not
// would be stored over its record's head, so only a key the caller drew
// itself may be named.
func (s *Store) ReadAheadFresh(vs []*record.Version, fresh []bool) (*Ahead, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	s.state.Lock()
	waiting, logPrev := s.st.stats.Waiting > 0, s.st.logPrev > 0
	s.state.Unlock()
	a := &Ahead{at: s.applied.Load()} // before the reads: a commit during them moves it
	free := s.freeLinePlaces(vs)
	// The recs are made in one buffer, and each space's tag once: a rec
	// is needed here only for its head's key, and Prepare makes each
	// again for the batch's writes, on every core.
	n := 0
	for _, v := range vs {
		n += keys.RecLen(v.Key)
	}
	recs := make([]byte, 0, n)
	var (
		space  string
		tag    [keys.SpaceLen]byte
		tagged bool
	)
	ks, absent := s.aheadKeys(vs, func(i int) (canonical.ID, []byte, bool) {
		v := vs[i]
		d, ok := v.Digest()
		if !ok || !v.HasSpace {
			return d, nil, false
		}
		if !tagged || v.Space != space {
			space, tag, tagged = v.Space, keys.SpaceTag(v.Space), true
		}
		at := len(recs)
		recs = keys.AppendRec(recs, tag, v.Key)
		return d, recs[at:len(recs):len(recs)], true
	}, nil, waiting, logPrev, free, fresh, nil)
	a.m = make(map[string]ahead, len(ks)+len(free)+len(absent))
	for k := range free {
		a.m[k] = aheadMissing
	}
	for _, k := range absent {
		a.m[frozen(k)] = aheadMissing
	}
	slices.SortFunc(ks, bytes.Compare)
	ks = slices.CompactFunc(ks, bytes.Equal)
	if len(ks) == 0 {
		return a, nil
	}
	found := make([]bool, len(ks))
	if err := s.kv.GetMany(ks, func(i int, v []byte) {
		found[i] = true
		a.m[frozen(ks[i])] = aheadOf(v)
	}); err != nil {
		return nil, err
	}
	for i, k := range ks {
		if !found[i] {
			a.m[frozen(k)] = aheadMissing
		}
	}
	return a, nil
}

// freeLinePlaces is the line places of vs the store holds nothing at,
// found a line at a time: a batch of one writer's versions takes n, n+1,
// … in its line, and one range read from the lowest to the highest that
// finds nothing tells they are all free, where a look-up a place reads
// each (the node's own writes: every version a new place). A line whose
// range holds anything, or that the batch takes one place of, is left to
// the look-ups.
func (s *Store) freeLinePlaces(vs []*record.Version) map[string]bool {
	// Made a batch, not a write: the lines' places share one slice, and
	// the places found free key the map as the strings over the keys
	// LinePlaces made (never changed after), not copies.
	type span struct {
		name   [3]string
		lo, hi int64
		n      int // its places in vs
		places []int64
	}
	var spans []span
	lines := map[[3]string]int{}
	at := make([]int32, len(vs)) // each version's line in spans; -1: none
	for i, v := range vs {
		if v.Log == nil || !v.HasSpace {
			at[i] = -1
			continue
		}
		name := [3]string{v.Space, v.Author, v.Collection}
		j, ok := lines[name]
		if !ok {
			j = len(spans)
			lines[name] = j
			spans = append(spans, span{name: name, lo: v.Log.N, hi: v.Log.N})
		}
		sp := &spans[j]
		sp.lo, sp.hi = min(sp.lo, v.Log.N), max(sp.hi, v.Log.N)
		sp.n++
		at[i] = int32(j)
	}
	// Each line's places, with room for the two bounds LinePlaces makes.
	all := make([]int64, 0, len(vs)+2*len(spans))
	for j := range spans {
		sp := &spans[j]
		sp.places = all[len(all) : len(all) : len(all)+sp.n+2]
		all = all[:len(all)+sp.n+2]
	}
	for i, v := range vs {
		if at[i] >= 0 {
			sp := &spans[at[i]]
			sp.places = append(sp.places, v.Log.N)
		}
	}
	var free map[string]bool
	for j := range spans {
		sp := &spans[j]
		if len(sp.places) < 2 || sp.hi >= record.MaxSafeInteger {
			continue
		}
		name := sp.name
		ks := keys.LinePlaces(name[0], name[1], name[2], append(sp.places, sp.lo, sp.hi+1))
		it, err := s.kv.NewIter(ks[len(ks)-2], ks[len(ks)-1])
		if err != nil {
			continue
		}
		held := it.Next()
		if err := errors.Join(it.Err(), it.Close()); err != nil || held {
			continue
		}
		if free == nil {
			free = make(map[string]bool, len(vs))
		}
		for _, k := range ks[:len(ks)-2] {
			free[frozen(k)] = true
		}
	}
	return free
}

// appliedBatch is the keys a batch committed (its writes), and the count
// of commits it made (Store.applied).
type appliedBatch struct {
	n uint64
	w map[string]write
}

// maxAppliedKeys bounds the keys of the last batch committed that the
// store keeps for what was read ahead of it: a batch of the node's own
// writes writes a few hundred; a bigger one's reads are made again.
const maxAppliedKeys = 1 << 12

// current reports whether what a holds is what the store holds now, but
// for the batch committing (which a batch decided now reads through in
// memory): nothing was committed since it was read, or one batch whose
// keys are known, and those are left out of a, to be read again.
func (a *Ahead) current(s *Store) bool {
	switch s.applied.Load() {
	case a.at:
		return true
	case a.at + 1:
		last := s.lastApplied.Load()
		if last == nil || last.n != a.at+1 {
			return false
		}
		for k := range a.m {
			if _, ok := last.w[k]; ok {
				delete(a.m, k)
			}
		}
		return true
	}
	return false
}

// ReadAhead gives the batch what [Store.ReadAhead] read for it (nil:
// nothing).
func (p *Prepared) ReadAhead(a *Ahead) { p.ahead = a }

// Before gives what must be durable before the batch's writes are: once
// decided, the batch commits only after fn returns nil, and fails — as a
// failed commit does, with the batches decided after it — when fn fails.
// The node's own writes wait there for the sync of their log places (02
// §4.10: a place is written down before the version at it leaves), so
// that sync runs beside signing and deciding, not before them.
func (p *Prepared) Before(fn func() error) { p.before = fn }

// checkAll runs Judge.Check over vs on Options.Workers goroutines, and
// encodes each version that passes.
func (s *Store) checkAll(ctx context.Context, j Judge, vs []*record.Version, p *Prepared, errs []error) {
	one := func(i int) {
		p.checked[i], errs[i] = j.Check(vs[i])
		if errs[i] == nil {
			p.enc[i], errs[i] = encode(vs[i])
		}
	}
	n := min(s.opts.Workers, len(vs))
	if n <= 1 {
		for i := range vs {
			one(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(vs) {
					return
				}
				one(i)
			}
		}()
	}
	wg.Wait()
}
