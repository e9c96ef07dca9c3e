package engine

import (
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// put stores a version the judge let in, with every index, in the batch:
// its envelope forever; its body when it is the record's top version, the
// first that stands, retained, or a delete (02 §4.5); and demotes to a stub,
// in the same batch, what it displaces.
func (t *tx) put(d canonical.ID, v *record.Version, verdict Verdict, e *encoded) (Storage, error) {
	rec := e.rec
	oh, hasHead, err := t.head(rec)
	if err != nil {
		return None, err
	}
	nh := oh
	isTop := !hasHead || record.SupersedesBy(v.Seq, v.ID, oh.topSeq, oh.top.String())
	isFirst := verdict == Stands && (!oh.hasFirst || record.SupersedesBy(v.Seq, v.ID, oh.firstSeq, oh.first.String()))
	keep := v.HasBody && (v.Deleted || v.Retain || isTop || isFirst)
	whole := v.Deleted || keep
	me := holding{whole: whole, retain: v.Retain, deleted: v.Deleted}
	if keep {
		me.bodyLen = len(e.body)
	}
	if isTop {
		nh.top, nh.topSeq, nh.topH = d, v.Seq, me
	}
	if isFirst {
		nh.hasFirst, nh.first, nh.firstSeq, nh.firstH, nh.firstEnv, nh.firstBody = true, d, v.Seq, me, e.env, nil
		if keep {
			nh.firstBody = e.body
		}
	}
	// The version was not held: its own keys are new to the store.
	t.setFresh(keys.EnvelopeKey(d), e.env)
	t.st.stats.Versions++
	t.st.stats.EnvelopeBytes += int64(len(e.env))
	if keep {
		t.setFresh(keys.BodyKey(d), e.body)
		t.st.stats.BodyBytes += int64(len(e.body))
	}
	if whole {
		t.st.stats.Whole++
	} else {
		t.st.stats.Stubs++
	}
	t.setFresh(keys.HistoryKey(rec, v.Seq, v.ID), histEntry{verdict: verdict, retain: v.Retain, deleted: v.Deleted}.encode())
	if !hasHead || !nh.equal(oh) {
		t.set(keys.HeadKey(rec), nh.encode())
	}
	if hasHead {
		for _, c := range [2]struct {
			d    canonical.ID
			hold holding
			ok   bool
		}{{oh.top, oh.topH, true}, {oh.first, oh.firstH, oh.hasFirst && oh.first != oh.top}} {
			if c.ok && c.d != nh.top && !(nh.hasFirst && c.d == nh.first) {
				t.demote(c.d, c.hold)
			}
		}
	}
	if err := t.index(d, v); err != nil {
		return None, err
	}
	t.stored[d] = v
	t.events = append(t.events, Event{Kind: EventAdmitted, Space: v.Space, Key: v.Key, ID: v.ID, Verdict: verdict})
	if nh.hasFirst != oh.hasFirst || nh.first != oh.first || nh.firstH.whole != oh.firstH.whole {
		id := ""
		if nh.hasFirst && nh.firstH.whole {
			id = nh.first.String()
		}
		t.events = append(t.events, Event{Kind: EventCurrent, Space: v.Space, Key: v.Key, ID: id, Verdict: Stands})
	}
	t.change(d, Stored)
	if whole {
		t.final[d] = Whole
		return Whole, nil
	}
	t.final[d] = Stub
	return Stub, nil
}

// demote drops the body of a version that is no longer the record's top
// nor the first that stands, unless it is retained or a delete (02 §4.5).
// hold is how it was held, as the record's head kept it.
func (t *tx) demote(d canonical.ID, hold holding) {
	if !hold.whole || hold.retain || hold.deleted {
		return
	}
	t.del(keys.BodyKey(d))
	t.st.stats.BodyBytes -= int64(hold.bodyLen)
	t.st.stats.Whole--
	t.st.stats.Stubs++
	t.final[d] = Stub
	// t.stored keeps the version whole: the judge reads envelopes only
	// (HeldReader.Held), and cutting a copy costs more than it saves.
}

// index writes the space registry, the sync order and the writer line.
func (t *tx) index(d canonical.ID, v *record.Version) error {
	if !t.spaces[v.Space] && !t.s.knownSpace(v.Space) {
		sk := keys.SpaceKey(v.Space)
		if _, ok, err := t.get(sk); err != nil {
			return err
		} else if !ok {
			t.set(sk, []byte(v.Space))
			t.st.stats.Spaces++
		}
		t.spaces[v.Space] = true
	}
	t.setFresh(keys.OrderKey(v.Space, record.UnixMillis(v.CreatedAt), d), []byte(v.Collection))
	return t.line(d, v)
}
