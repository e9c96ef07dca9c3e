package engine

import (
	"errors"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// put stores a version the judge let in, with every index, in the batch:
// its envelope forever; its body when it is the record's top version, the
// first that stands, retained, or a delete (02 §4.5); and demotes to a stub,
// in the same batch, what it displaces.
func (t *tx) put(d canonical.ID, v *record.Version, verdict Verdict) (Storage, error) {
	rec := keys.Rec(v.Space, v.Key)
	oh, hasHead, err := t.head(rec)
	if err != nil {
		return None, err
	}
	nh := oh
	isTop := !hasHead || record.SupersedesBy(v.Seq, v.ID, oh.topSeq, oh.top.String())
	if isTop {
		nh.top, nh.topSeq = d, v.Seq
	}
	isFirst := verdict == Stands && (!oh.hasFirst || record.SupersedesBy(v.Seq, v.ID, oh.firstSeq, oh.first.String()))
	keep := v.HasBody && (v.Deleted || v.Retain || isTop || isFirst)
	whole := v.Deleted || keep
	env, body, err := encodeEnvelope(v)
	if err != nil {
		return None, err
	}
	if isFirst {
		nh.hasFirst, nh.first, nh.firstSeq, nh.firstWhole, nh.firstEnv, nh.firstBody = true, d, v.Seq, whole, env, nil
		if keep {
			nh.firstBody = body
		}
	}
	if err := t.b.Set(keys.EnvelopeKey(d), env); err != nil {
		return None, err
	}
	t.st.stats.Versions++
	t.st.stats.EnvelopeBytes += int64(len(env))
	if keep {
		if err := t.b.Set(keys.BodyKey(d), body); err != nil {
			return None, err
		}
		t.st.stats.BodyBytes += int64(len(body))
	}
	if whole {
		t.st.stats.Whole++
	} else {
		t.st.stats.Stubs++
	}
	e := histEntry{verdict: verdict, whole: whole, retain: v.Retain, deleted: v.Deleted}
	if keep {
		e.bodyLen = len(body)
	}
	if err := t.b.Set(keys.HistoryKey(rec, v.Seq, v.ID), e.encode()); err != nil {
		return None, err
	}
	if !hasHead || !nh.equal(oh) {
		if err := t.b.Set(keys.HeadKey(rec), nh.encode()); err != nil {
			return None, err
		}
	}
	if hasHead {
		for _, c := range [2]struct {
			d   canonical.ID
			seq int64
			ok  bool
		}{{oh.top, oh.topSeq, true}, {oh.first, oh.firstSeq, oh.hasFirst}} {
			if c.ok && c.d != nh.top && !(nh.hasFirst && c.d == nh.first) {
				if err := t.demote(rec, c.d, c.seq); err != nil {
					return None, err
				}
			}
		}
	}
	if err := t.index(d, v); err != nil {
		return None, err
	}
	t.stored[d] = v
	t.events = append(t.events, Event{Kind: EventAdmitted, Space: v.Space, Key: v.Key, ID: v.ID, Verdict: verdict})
	if nh.hasFirst != oh.hasFirst || nh.first != oh.first || nh.firstWhole != oh.firstWhole {
		id := ""
		if nh.hasFirst && nh.firstWhole {
			id = nh.first.String()
		}
		t.events = append(t.events, Event{Kind: EventCurrent, Space: v.Space, Key: v.Key, ID: id, Verdict: Stands})
	}
	if err := t.change(d, Stored); err != nil {
		return None, err
	}
	if whole {
		t.final[d] = Whole
		return Whole, nil
	}
	t.final[d] = Stub
	return Stub, nil
}

// demote drops the body of a version that is no longer the record's top
// nor the first that stands, unless it is retained or a delete (02 §4.5).
func (t *tx) demote(rec []byte, d canonical.ID, seq int64) error {
	hk := keys.HistoryKey(rec, seq, d.String())
	hb, err := t.b.Get(hk)
	if err != nil {
		return err
	}
	e, err := decodeHist(hb)
	if err != nil {
		return err
	}
	if !e.whole || e.retain || e.deleted {
		return nil
	}
	if err := t.b.Delete(keys.BodyKey(d)); err != nil {
		return err
	}
	t.st.stats.BodyBytes -= int64(e.bodyLen)
	e.whole, e.bodyLen = false, 0
	if err := t.b.Set(hk, e.encode()); err != nil {
		return err
	}
	t.st.stats.Whole--
	t.st.stats.Stubs++
	t.final[d] = Stub
	if v, ok := t.stored[d]; ok {
		t.stored[d] = v.Stub()
	}
	return nil
}

// index writes the space registry, the sync order and the writer line.
func (t *tx) index(d canonical.ID, v *record.Version) error {
	if !t.s.spaces[v.Space] && !t.spaces[v.Space] {
		sk := keys.SpaceKey(v.Space)
		if _, err := t.b.Get(sk); errors.Is(err, ErrNotFound) {
			if err := t.b.Set(sk, []byte(v.Space)); err != nil {
				return err
			}
			t.st.stats.Spaces++
		} else if err != nil {
			return err
		}
		t.spaces[v.Space] = true
	}
	if err := t.b.Set(keys.OrderKey(v.Space, record.UnixMillis(v.CreatedAt), d), []byte(v.Collection)); err != nil {
		return err
	}
	return t.line(d, v)
}
