package engine

import (
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// tx is one write batch: its writes and what was read ahead for it (see
// overlay.go), a copy of the counters it changes, and what to make visible
// once it commits.
type tx struct {
	s *Store
	j Judge
	// prev is the batch decided before this one while it is committing:
	// this one reads its writes (see pipeline.go).
	prev   *tx
	done   chan struct{} // closed once committed, or failed
	before func() error  // waited for before the commit (Prepared.Before)
	err    error         // why it failed, set before done closes
	st     counters
	w      map[string]write
	ahead  map[string]ahead
	sorted []string // written keys of the ranged tables, ascending
	// pend is this batch's changes, written as one change log entry when
	// it is sealed (changelog.go); verdicts the last standing the batch
	// gave each version it changed.
	pend     []pendingChange
	verdicts map[canonical.ID]Verdict
	outs     []Outcome // Admit's outcomes, nil for other writes
	stored   map[canonical.ID]*record.Version
	// weight is each stored version's bytes as encoded (envelope and
	// body): what it weighs in the cache of held versions once committed.
	weight map[canonical.ID]int
	// pending maps a waiting version to the inputs it came from, so a
	// version re-judged in the same batch reports its final outcome.
	pending map[canonical.ID][]int
	queue   []canonical.ID // stored in this batch, waiters not yet woken
	events  []Event
	refused []refusal
	// final is how versions this batch stored or changed end up held, so
	// an outcome reports a demotion later in the same batch.
	final map[canonical.ID]Storage
	// spaces registered (or found registered) in this batch.
	spaces map[string]bool
	// dropped is the bytes of the waiting entries the batch dropped or
	// expired (WaitingLimits.MaxDroppedBytes).
	dropped int64
	// lacks: the batch named a file the store does not hold.
	lacks bool
	// restood is the standing a Restander judge changed versions to in
	// this batch (rejudge.go), so their outcomes report it.
	restood map[canonical.ID]Verdict
	// gaps are the versions stored in this batch whose log.prev was not
	// held when they were (Outcome.Gap).
	gaps map[canonical.ID]struct{}
	// now is the batch's time (Unix ms), waiting versions' arrival; srcs
	// the sources whose waiting this batch changed (sources.go).
	now  int64
	srcs map[[32]byte]source
	// ka holds the keys of w (keyarena.go).
	ka keyArena
	// fill, for a batch of a Filling, is what the store knows of its
	// space: keys of it not read ahead (filling.go).
	fill *fillState
}

// begin starts a batch of about n versions; Store.mu is held. It builds on
// the batch still committing, if there is one, once the one before that
// has committed. Its writes and events are sized for n new versions (a
// version, its id, order and line entries, history entry and head, and
// its index entries: about ten keys), so that a batch does not grow them
// again and again as it is decided.
func (s *Store) begin(j Judge, n int) *tx {
	s.fill = nil // another batch: what a Filling knew ends (Submit keeps its own)
	t := &tx{s: s, j: j, done: make(chan struct{}), w: s.writeMap(12 * n),
		events: make([]Event, 0, n),
		stored: make(map[canonical.ID]*record.Version, n), weight: make(map[canonical.ID]int, n), pending: make(map[canonical.ID][]int),
		final: make(map[canonical.ID]Storage, n), spaces: make(map[string]bool), gaps: make(map[canonical.ID]struct{}), now: s.now().UnixMilli(),
		ka: keyArena{first: n * keyBytesPerVersion}}
	if prev := s.inflight; prev != nil {
		if pp := prev.prev; pp != nil {
			<-pp.done
			prev.prev = nil
		}
		select {
		case <-prev.done:
			s.inflight = nil
		default:
			t.prev, t.st = prev, prev.st
			return t
		}
	}
	s.state.Lock()
	t.st = s.st
	s.state.Unlock()
	return t
}

// writeMap is an empty write map for a batch of about n keys: one a batch
// before left (Store.write), or a new one. It is cleared here, under
// Store.mu, as what is read ahead is checked against the last batch's
// (Ahead.current): nothing reads the map once it is given back.
func (s *Store) writeMap(n int) map[string]write {
	if m, ok := s.spareWrites.Get().(map[string]write); ok {
		clear(m)
		return m
	}
	return make(map[string]write, n)
}

// envelope returns a held version as the judge sees it (stub or whole), or
// ok false when it is not held.
func (t *tx) envelope(d canonical.ID) (*record.Version, bool, error) {
	if v, ok := t.stored[d]; ok {
		return v, true, nil
	}
	if t.prev != nil {
		if v, ok := t.prev.stored[d]; ok {
			return v, true, nil
		}
	}
	if v, ok := t.s.cached(d); ok {
		return v, true, nil
	}
	_, env, _, ok, err := t.version(d)
	if !ok || err != nil {
		return nil, false, err
	}
	v, err := decodeHeld(env, nil)
	return v, err == nil, err
}

// version reads a held version's vseq, stored envelope and body (nil for
// a stub) as this batch sees them; ok false when it is not held.
func (t *tx) version(d canonical.ID) (vseq uint64, env, body []byte, ok bool, err error) {
	sb, ok, err := t.get(keys.IDKey(d))
	if !ok || err != nil {
		return 0, nil, nil, false, err
	}
	if vseq, err = decodeVseq(sb); err != nil {
		return 0, nil, nil, false, err
	}
	env, body, ok, err = t.valueAt(vseq)
	if err != nil {
		return 0, nil, nil, false, err
	}
	if !ok {
		return 0, nil, nil, false, Errorf(ErrCorrupt, "damaged: version %s has no value at %d", d, vseq)
	}
	return vseq, env, body, true, nil
}

// holding returns how a held version is held: its history entry's flags,
// and whether its body is there.
func (t *tx) holding(d canonical.ID, v *record.Version) (histEntry, holding, error) {
	vseq, _, body, ok, err := t.version(d)
	if err != nil {
		return histEntry{}, holding{}, err
	}
	if !ok {
		return histEntry{}, holding{}, Errorf(ErrCorrupt, "damaged: version %s in a history is not held", d)
	}
	e, _, err := t.histEntryAt(v, vseq)
	if err != nil {
		return e, holding{}, err
	}
	return e, holding{whole: body != nil || e.deleted, retain: e.retain, deleted: e.deleted, bodyLen: len(body)}, nil
}

// Held implements HeldReader for the judge.
func (t *tx) Held(id canonical.ID) (*record.Version, bool, error) {
	return t.envelope(id)
}

// Standing implements HeldReader for the judge.
func (t *tx) Standing(id canonical.ID) (Verdict, bool, error) {
	v, ok, err := t.Held(id)
	if !ok || err != nil {
		return Refused, false, err
	}
	vseq, err := t.vseqOf(id)
	if err != nil {
		return Refused, false, err
	}
	e, _, err := t.histEntryAt(v, vseq)
	if err != nil {
		return Refused, false, err
	}
	return e.verdict, true, nil
}

func (t *tx) head(rec []byte) (head, bool, error) {
	hb, ok, err := t.get(keys.AppendHeadKey(t.key(), rec))
	if !ok || err != nil {
		return head{}, false, err
	}
	h, err := decodeHead(hb)
	return h, err == nil, err
}

func (t *tx) outcome(i int, o Outcome) {
	if i >= 0 {
		o.ID = t.outs[i].ID
		t.outs[i] = o
	}
}

// admitOne takes in one checked version of an Admit batch.
func (t *tx) admitOne(i int, v *record.Version, c Checked, e *encoded, from string) error {
	if !e.ok {
		t.outcome(i, Outcome{Verdict: Refused, Refusal: &record.Refusal{Code: CodeStoreID, Field: "id",
			Message: "the id is not a content id in its canonical text (02 §2)"}})
		return nil
	}
	if !v.HasSpace {
		t.outcome(i, Outcome{Verdict: Refused, Refusal: &record.Refusal{Code: CodeStoreSpace, Field: "space",
			Message: "a version with no space (a loose version, 02 §3.5) is never stored"}})
		return nil
	}
	d := e.d
	held, ok, err := t.envelope(d)
	if err != nil {
		return err
	}
	if ok {
		return t.again(i, d, held, v, from)
	}
	if t.st.stats.Waiting == 0 {
		// Nothing waits: no lookup needed.
	} else if w, ok, err := t.waitingOf(d); err != nil {
		return err
	} else if ok {
		if v.HasBody && w.v.IsStub() {
			whole := w
			whole.v = v
			if err := t.rewriteWaiting(d, w, whole); err != nil {
				return err
			}
		}
		t.pending[d] = append(t.pending[d], i)
		t.outcome(i, Outcome{Verdict: Later})
		return nil
	}
	dec, err := t.j.Decide(t, v, c)
	if err != nil {
		return err
	}
	if err := t.apply(i, d, v, c, e, from, dec, nil); err != nil {
		return err
	}
	return t.drain()
}

// apply carries out a decision. was is a version re-judged as it waited
// (nil for a new arrival): waiting again, it keeps its place and arrival.
// e is its encoding when made ahead.
func (t *tx) apply(i int, d canonical.ID, v *record.Version, c Checked, e *encoded, from string, dec Decision, was *waiting) error {
	switch dec.Verdict {
	case Stands, Withdrawn:
		if e == nil || e.env == nil {
			enc, err := encode(v)
			if err != nil {
				return err
			}
			e = &enc
		}
		st, err := t.put(d, v, dec.Verdict, e, from, c.Root)
		if err != nil {
			return err
		}
		var why *record.Refusal
		if dec.Verdict == Withdrawn {
			why = dec.Refusal
		}
		t.outcome(i, Outcome{Verdict: dec.Verdict, Stored: st, Refusal: why, New: true})
		for _, j := range t.pending[d] {
			t.outcome(j, Outcome{Verdict: dec.Verdict, Stored: st, Refusal: why, New: true})
		}
		delete(t.pending, d)
		t.queue = append(t.queue, d)
		if err := t.restand(v, dec.Verdict); err != nil {
			return err
		}
	case Later:
		if len(dec.Waits) == 0 {
			return fmt.Errorf("minca/engine: the judge said later for %s without naming what it waits for", v.ID)
		}
		w := waiting{v: v, from: from, root: c.Root, waits: dec.Waits}
		if was != nil {
			w.seq, w.arrived = was.seq, was.arrived
		}
		if err := t.wait(d, w); err != nil {
			return err
		}
		if i >= 0 {
			t.pending[d] = append(t.pending[d], i)
		}
		t.outcome(i, Outcome{Verdict: Later})
	case Refused:
		r := dec.Refusal
		if r == nil {
			r = &record.Refusal{Code: "judge/refused", Message: "refused by the judge"}
		}
		t.outcome(i, Outcome{Verdict: Refused, Refusal: r})
		for _, j := range t.pending[d] {
			t.outcome(j, Outcome{Verdict: Refused, Refusal: r})
		}
		delete(t.pending, d)
		if i < 0 {
			t.refused = append(t.refused, refusal{from, d})
		}
	default:
		return fmt.Errorf("minca/engine: the judge gave an unknown verdict %d for %s", dec.Verdict, v.ID)
	}
	return nil
}

// drain re-judges the versions waiting for what this batch stored, and for
// what those store in turn (02 §9.5).
func (t *tx) drain() error {
	for len(t.queue) > 0 {
		if t.st.stats.Waiting == 0 {
			t.queue = t.queue[:0]
			return nil
		}
		d := t.queue[0]
		t.queue = t.queue[1:]
		waiters, err := t.waitersOf(d)
		if err != nil {
			return err
		}
		for _, wd := range waiters {
			w, ok, err := t.waitingOf(wd)
			if err != nil {
				return err
			}
			if !ok {
				continue // woken already, by another id it waited for
			}
			if err := t.unwait(wd, w); err != nil {
				return err
			}
			dec, err := t.j.Decide(t, w.v, Checked{Root: w.root})
			if err != nil {
				return err
			}
			if err := t.apply(-1, wd, w.v, Checked{Root: w.root}, nil, w.from, dec, &w); err != nil {
				return err
			}
		}
	}
	return nil
}

// again handles a copy of a version already held: a whole copy of a held
// stub adds its body when the version is current or retained (02 §4.5);
// anything else changes nothing.
func (t *tx) again(i int, d canonical.ID, held, v *record.Version, from string) error {
	e, hold, err := t.holding(d, held)
	if err != nil {
		return err
	}
	if !hold.whole && v.HasBody && !v.Deleted {
		rec := keys.Rec(held.Space, held.Key)
		h, _, err := t.head(rec)
		if err != nil {
			return err
		}
		isFirst := h.hasFirst && h.first == d
		if e.retain || h.top == d || isFirst {
			if err := t.addBody(d, v, rec, e, h, isFirst, from); err != nil {
				return err
			}
			hold.whole = true
		}
	}
	st := Stub
	if hold.whole {
		st = Whole
	}
	t.outcome(i, Outcome{Verdict: e.verdict, Stored: st})
	return nil
}

func (t *tx) addBody(d canonical.ID, v *record.Version, rec []byte, e histEntry, h head, isFirst bool, from string) error {
	body, err := canonical.Marshal(v.Body) // only the body: the envelope is held
	if err != nil {
		return err
	}
	vseq, env, _, ok, err := t.version(d)
	if err != nil {
		return err
	}
	if !ok {
		return Errorf(ErrCorrupt, "damaged: version %s is not held", d)
	}
	if isFirst {
		// Its record's current version: its value in 'c' (a head as
		// layouts 11 to 15 wrote it held it, and setHead writes the
		// head in this layout).
		t.set(keys.CurrentKey(vseq), versionValue(env, body))
		t.set(keys.VersionKey(vseq), currentMark)
	} else {
		t.set(keys.VersionKey(vseq), versionValue(env, body))
	}
	if err := t.nameFiles(d, v.Space, v.Files); err != nil {
		return err
	}
	if isFirst || h.top == d {
		oh := h
		hold := holding{whole: true, retain: e.retain, deleted: e.deleted, bodyLen: len(body)}
		if h.top == d {
			h.topH = hold
		}
		if isFirst {
			h.firstH, h.firstEnv, h.firstBody = hold, env, body
		}
		var fresh uint64
		if isFirst {
			fresh = vseq // its value is in 'c' already
		}
		if err := t.setHead(rec, oh, h, true, fresh); err != nil {
			return err
		}
		if err := t.noteCurrent(v.Space, v.Key, oh, h, v); err != nil {
			return err
		}
	}
	t.st.stats.Stubs--
	t.st.stats.Whole++
	t.final[d] = Whole
	t.st.stats.BodyBytes += int64(len(body))
	t.stored[d], t.weight[d] = v, len(env)+len(body)
	t.events = append(t.events, Event{Kind: EventAdmitted, Space: v.Space, Key: v.Key, ID: v.ID, Verdict: e.verdict, Version: v})
	t.events[len(t.events)-1].Seq = t.change(d, BodyAdded, from, rec, e.verdict, len(t.events)-1)
	return nil
}
