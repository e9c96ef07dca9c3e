package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/minca-go/minca/engine/internal/keys"
)

// SetStanding changes a held version's standing to Stands or Withdrawn, as
// the judge decides when the access history grows (02 §9.4, §9.5), and
// keeps the record's indexes right: the first version that stands is what
// reads (§9.5), and a body no longer current is demoted. A version that
// becomes the one that reads while a stub reads as not held until its body
// arrives (§4.5). Durable when it returns.
func (s *Store) SetStanding(ctx context.Context, id string, to Verdict) error {
	if err := s.check(); err != nil {
		return err
	}
	if to != Stands && to != Withdrawn {
		return fmt.Errorf("minca/engine: SetStanding: %v is not a standing", to)
	}
	d, ok := keys.ParseExact(id)
	if !ok {
		return fmt.Errorf("%w: version %q", ErrNotFound, id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.begin(s.opts.Judge)
	if err != nil {
		return err
	}
	defer t.b.Close()
	v, ok, err := t.envelope(d)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: version %s", ErrNotFound, id)
	}
	e, err := t.histEntry(v)
	if err != nil {
		return err
	}
	if e.verdict == to {
		return nil
	}
	rec := keys.Rec(v.Space, v.Key)
	e.verdict = to
	if err := t.b.Set(keys.HistoryKey(rec, v.Seq, v.ID), e.encode()); err != nil {
		return err
	}
	oh, _, err := t.head(rec)
	if err != nil {
		return err
	}
	nh, err := t.firstStanding(rec, oh)
	if err != nil {
		return err
	}
	if !nh.equal(oh) {
		if err := t.b.Set(keys.HeadKey(rec), nh.encode()); err != nil {
			return err
		}
		if oh.hasFirst && oh.first != nh.top && !(nh.hasFirst && oh.first == nh.first) {
			if err := t.demote(rec, oh.first, oh.firstSeq); err != nil {
				return err
			}
		}
	}
	t.events = append(t.events, Event{Kind: EventStanding, Space: v.Space, Key: v.Key, ID: v.ID, Verdict: to})
	if nh.hasFirst != oh.hasFirst || nh.first != oh.first || nh.firstWhole != oh.firstWhole {
		cur := ""
		if nh.hasFirst && nh.firstWhole {
			cur = nh.first.String()
		}
		t.events = append(t.events, Event{Kind: EventCurrent, Space: v.Space, Key: v.Key, ID: cur, Verdict: Stands})
	}
	delete(t.stored, d)
	return s.commit(t)
}

// firstStanding recomputes a record's head from its history: the top is the
// first entry in 02 §4.3 order, the one that reads the first that stands.
func (t *tx) firstStanding(rec []byte, h head) (head, error) {
	p := keys.HistoryPrefix(rec)
	it, err := t.b.NewIter(p, keys.PrefixEnd(p))
	if err != nil {
		return h, err
	}
	nh := head{}
	first := true
	for it.Next() {
		e, err := decodeHist(it.Value())
		if err != nil {
			it.Close()
			return h, err
		}
		id := keys.HistoryID(it.Key())
		d, ok := keys.ParseExact(id)
		if !ok {
			it.Close()
			return h, fmt.Errorf("%w: history key id %q", ErrCorrupt, id)
		}
		seq := int64(1<<53 - 1 - beUint64(it.Key()[len(it.Key())-len(id)-8:]))
		if first {
			nh.top, nh.topSeq, first = d, seq, false
		}
		if e.verdict == Stands {
			nh.hasFirst, nh.first, nh.firstSeq, nh.firstWhole = true, d, seq, e.whole
			break
		}
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		return h, err
	}
	if nh.hasFirst {
		env, err := t.b.Get(keys.EnvelopeKey(nh.first))
		if err != nil {
			return h, err
		}
		nh.firstEnv = env
		body, err := t.b.Get(keys.BodyKey(nh.first))
		if err == nil {
			nh.firstBody = body
		} else if !errors.Is(err, ErrNotFound) {
			return h, err
		}
	}
	return nh, nil
}

func beUint64(b []byte) uint64 {
	var n uint64
	for _, c := range b[:8] {
		n = n<<8 | uint64(c)
	}
	return n
}
