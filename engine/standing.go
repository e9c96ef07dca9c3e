package engine

import (
	"bytes"
	"context"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
)

// SetStanding changes a held version's standing to Stands or Withdrawn, as
// the judge decides when the access history grows (02 §9.4, §9.5), and
// keeps the record's indexes right: the first version that stands is what
// reads (§9.5), and a body no longer current is demoted. A version that
// becomes the one that reads while a stub reads as not held until its body
// arrives (§4.5). Durable when it returns.
func (s *Store) SetStanding(ctx context.Context, d canonical.ID, to Verdict) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if to != Stands && to != Withdrawn {
		return fmt.Errorf("minca/engine: SetStanding: %v is not a standing", to)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	t := s.begin(s.opts.Judge, 1)
	changed, err := t.setStanding(d, to)
	if err != nil || !changed {
		return err
	}
	delete(t.stored, d)
	delete(t.weight, d)
	return s.commit(t)
}

// setStanding changes a held version's standing in the batch, with its
// record's head, a demotion and the events; changed is false when it
// stood so already.
func (t *tx) setStanding(d canonical.ID, to Verdict) (changed bool, err error) {
	v, ok, err := t.envelope(d)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, fmt.Errorf("%w: version %s", ErrNotFound, d)
	}
	vseq, err := t.vseqOf(d)
	if err != nil {
		return false, err
	}
	if vseq == 0 {
		return false, fmt.Errorf("%w: version %s", ErrNotFound, d)
	}
	rec := keys.Rec(v.Space, v.Key)
	oh, ok, err := t.head(rec)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, Errorf(ErrCorrupt, "damaged: version %s has no history entry: its record has no head", v.ID)
	}
	e, at, err := t.histEntryOf(rec, oh.num, v, vseq)
	if err != nil {
		return false, err
	}
	if e.verdict == to {
		return false, nil
	}
	e.verdict = to
	// An entry by id (layouts before 15) is written again by vseq.
	k := appendHistKey(nil, rec, oh.num, v.Seq, vseq)
	if !bytes.Equal(at, k) {
		t.del(at)
	}
	t.set(k, e.encode())
	if t.s.opts.Indexer != nil {
		// The indexer is told what the record read before: read before
		// this batch demotes it.
		if oh.firstEnv, oh.firstBody, err = t.firstValue(oh); err != nil {
			return false, err
		}
	}
	nh, err := t.firstStanding(rec, oh)
	if err != nil {
		return false, err
	}
	if !nh.equal(oh) {
		if err := t.setHead(rec, oh, nh, true, 0); err != nil {
			return false, err
		}
		if oh.hasFirst && oh.first != nh.top && !(nh.hasFirst && oh.first == nh.first) {
			if err := t.demote(oh.first, oh.firstV, oh.firstH, oh.firstEnv); err != nil {
				return false, err
			}
		}
	}
	// The change log keeps it with the batch, so it outlives a crash
	// before anyone heard the event.
	kind := Restood
	if to == Withdrawn {
		kind = Withdrew
	}
	t.events = append(t.events, Event{Kind: EventStanding, Space: v.Space, Key: v.Key, ID: v.ID, Verdict: to, Version: v})
	t.events[len(t.events)-1].Seq = t.change(d, kind, "", rec, to, len(t.events)-1)
	if err := t.noteCurrent(v.Space, v.Key, oh, nh, nil); err != nil {
		return false, err
	}
	return true, nil
}

// firstStanding recomputes a record's head from its history: the top is
// the first entry in 02 §4.3 order, the one that reads the first that
// stands.
func (t *tx) firstStanding(rec []byte, h head) (head, error) {
	rows, err := t.history(rec, h.num)
	if err != nil {
		return h, err
	}
	if len(rows) == 0 {
		return h, Errorf(ErrCorrupt, "damaged: record with no history")
	}
	nh := head{top: rows[0].d, topSeq: rows[0].k.Seq, num: h.num}
	for _, r := range rows {
		if r.e.verdict == Stands {
			nh.hasFirst, nh.first, nh.firstSeq = true, r.d, r.k.Seq
			break
		}
	}
	if nh.topV, nh.topH, _, _, err = t.holdingOf(nh.top); err != nil {
		return h, err
	}
	if nh.hasFirst {
		if nh.firstV, nh.firstH, nh.firstEnv, nh.firstBody, err = t.holdingOf(nh.first); err != nil {
			return h, err
		}
	}
	return nh, nil
}

// holdingOf reads where and how a held version is held, with its stored
// envelope and body.
func (t *tx) holdingOf(d canonical.ID) (uint64, holding, []byte, []byte, error) {
	v, ok, err := t.envelope(d)
	if err != nil {
		return 0, holding{}, nil, nil, err
	}
	if !ok {
		return 0, holding{}, nil, nil, Errorf(ErrCorrupt, "damaged: version %s in a history is not held", d)
	}
	vseq, env, body, ok, err := t.version(d)
	if err != nil {
		return 0, holding{}, nil, nil, err
	}
	if !ok {
		return 0, holding{}, nil, nil, Errorf(ErrCorrupt, "damaged: version %s in a history is not held", d)
	}
	e, _, err := t.histEntryAt(v, vseq)
	if err != nil {
		return 0, holding{}, nil, nil, err
	}
	return vseq, holding{whole: body != nil || e.deleted, retain: e.retain, deleted: e.deleted, bodyLen: len(body)}, env, body, nil
}
