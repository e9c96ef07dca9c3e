package engine

import (
	"context"
	"errors"
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
	if err := s.check(); err != nil {
		return err
	}
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
	e, err := t.histEntry(v)
	if err != nil {
		return false, err
	}
	if e.verdict == to {
		return false, nil
	}
	rec := keys.Rec(v.Space, v.Key)
	e.verdict = to
	t.set(keys.HistoryKey(rec, v.Seq, v.ID), e.encode())
	oh, _, err := t.head(rec)
	if err != nil {
		return false, err
	}
	nh, err := t.firstStanding(rec, oh)
	if err != nil {
		return false, err
	}
	if !nh.equal(oh) {
		if !(oh.hasFirst && nh.hasFirst && oh.first == nh.first) {
			t.giveBack(oh)
			if nh.hasFirst {
				t.set(keys.VersionKey(nh.firstV), markerValue(rec)) // the head holds it
			}
		}
		if oh.hasFirst && oh.first != nh.top && !(nh.hasFirst && oh.first == nh.first) {
			if err := t.demote(oh.first, oh.firstV, oh.firstH, oh.firstEnv); err != nil {
				return false, err
			}
		}
		t.set(keys.HeadKey(rec), nh.encode())
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
	p := keys.HistoryPrefix(rec)
	nh := head{}
	first := true
	var err error
	serr := t.scan(p, keys.PrefixEnd(p), func(k, val []byte) bool {
		if keys.IsHead(k) {
			return true
		}
		var e histEntry
		if e, err = decodeHist(val); err != nil {
			return false
		}
		id, d, ok := keys.HistoryID(k)
		if !ok {
			err = Errorf(ErrCorrupt, "damaged: history key id %q", id)
			return false
		}
		seq := int64(1<<53 - 1 - beUint64(k[len(k)-len(id)-8:]))
		if first {
			nh.top, nh.topSeq, first = d, seq, false
		}
		if e.verdict == Stands {
			nh.hasFirst, nh.first, nh.firstSeq = true, d, seq
			return false
		}
		return true
	})
	if err = errors.Join(serr, err); err != nil {
		return h, err
	}
	if first {
		return h, Errorf(ErrCorrupt, "damaged: record with no history")
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
	e, err := t.histEntry(v)
	if err != nil {
		return 0, holding{}, nil, nil, err
	}
	vseq, env, body, _, err := t.version(d)
	if err != nil {
		return 0, holding{}, nil, nil, err
	}
	return vseq, holding{whole: body != nil || e.deleted, retain: e.retain, deleted: e.deleted, bodyLen: len(body)}, env, body, nil
}

func beUint64(b []byte) uint64 {
	var n uint64
	for _, c := range b[:8] {
		n = n<<8 | uint64(c)
	}
	return n
}
