package engine

import (
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// put stores a version the judge let in, with every index, in the batch:
// its envelope forever; its body when it is the record's top version, the
// first that stands, retained, or a delete (02 §4.5); and demotes to a stub,
// in the same batch, what it displaces. from is where it came from, for the
// change log; root is the root the judge's Check gave it.
func (t *tx) put(d canonical.ID, v *record.Version, verdict Verdict, e *encoded, from, root string) (Storage, error) {
	rec := e.rec
	oh, hasHead, err := t.head(rec)
	if err != nil {
		return None, err
	}
	if hasHead && t.s.opts.Indexer != nil {
		// The indexer is told what the record read before: read before
		// this batch demotes it.
		if oh.firstEnv, oh.firstBody, err = t.firstValue(oh); err != nil {
			return None, err
		}
	}
	nh := oh
	if !hasHead {
		// A record first stored takes the next number, durable with its
		// first version in this batch (history.go).
		t.st.recs++
		nh.num = t.st.recs
	}
	isTop := !hasHead || supersedes(v, oh.topSeq, oh.top)
	isFirst := verdict == Stands && (!oh.hasFirst || supersedes(v, oh.firstSeq, oh.first))
	keep := v.HasBody && (v.Deleted || v.Retain || isTop || isFirst)
	whole := v.Deleted || keep
	me := holding{whole: whole, retain: v.Retain, deleted: v.Deleted}
	if keep {
		me.bodyLen = len(e.body)
	}
	t.st.vseq++
	vseq := t.st.vseq
	if isTop {
		nh.top, nh.topSeq, nh.topV, nh.topH = d, v.Seq, vseq, me
	}
	if isFirst {
		nh.hasFirst, nh.first, nh.firstSeq, nh.firstV, nh.firstH, nh.firstEnv, nh.firstBody = true, d, v.Seq, vseq, me, e.env, nil
		if keep {
			nh.firstBody = e.body
		}
	}
	// The version was not held: its own keys are new to the store.
	var body []byte
	if keep {
		body = e.body
	}
	t.setFresh(keys.AppendIDKey(t.key(), d), vseqValue(vseq))
	var fresh uint64
	if isFirst {
		fresh = vseq // its value goes to 'c', its record's current version's
		t.setFresh(keys.AppendCurrentKey(t.key(), vseq), versionValue(e.env, body))
		t.setFresh(keys.AppendVersionKey(t.key(), vseq), currentMark)
	} else {
		t.setFresh(keys.AppendVersionKey(t.key(), vseq), versionValue(e.env, body))
	}
	if len(body) > 0 {
		if err := t.nameFiles(d, v.Space, v.Files); err != nil {
			return None, err
		}
	}
	t.st.stats.Versions++
	t.st.stats.EnvelopeBytes += int64(len(e.env))
	t.st.stats.BodyBytes += int64(len(body))
	if whole {
		t.st.stats.Whole++
	} else {
		t.st.stats.Stubs++
	}
	t.setFresh(appendHistKey(t.key(), rec, nh.num, v.Seq, vseq), histEntry{verdict: verdict, retain: v.Retain, deleted: v.Deleted}.encode())
	if !hasHead || !nh.equal(oh) {
		if err := t.setHead(rec, oh, nh, hasHead, fresh); err != nil {
			return None, err
		}
	}
	if hasHead {
		if oh.top != nh.top && !(nh.hasFirst && oh.top == nh.first) {
			var env []byte // the head may have the first's envelope, not the top's
			if oh.hasFirst && oh.first == oh.top {
				env = oh.firstEnv
			}
			if err := t.demote(oh.top, oh.topV, oh.topH, env); err != nil {
				return None, err
			}
		}
		if oh.hasFirst && oh.first != oh.top && oh.first != nh.top && !(nh.hasFirst && oh.first == nh.first) {
			if err := t.demote(oh.first, oh.firstV, oh.firstH, oh.firstEnv); err != nil {
				return None, err
			}
		}
	}
	if err := t.index(d, vseq, v, e.tag); err != nil {
		return None, err
	}
	t.indexRoot(vseq, e.tag, root)
	t.stored[d], t.weight[d] = v, len(e.env)+len(e.body)
	t.events = append(t.events, Event{Kind: EventAdmitted, Space: v.Space, Key: v.Key, ID: v.ID, Verdict: verdict, Version: v})
	at := len(t.events) - 1
	if err := t.noteCurrent(v.Space, v.Key, oh, nh, v); err != nil {
		return None, err
	}
	t.events[at].Seq = t.change(d, Stored, from, rec, verdict, at)
	t.pend[len(t.pend)-1].vseq = vseq
	if whole {
		t.final[d] = Whole
		return Whole, nil
	}
	t.final[d] = Stub
	return Stub, nil
}

// supersedes is record.SupersedesBy against a held version known by its
// seq and digest; the digest's text is made only when the seqs tie.
func supersedes(v *record.Version, seq int64, d canonical.ID) bool {
	if v.Seq != seq {
		return v.Seq > seq
	}
	return record.SupersedesBy(v.Seq, v.ID, seq, d.String())
}

// demote drops the body of a version that is no longer the record's top
// nor the first that stands, unless it is retained or a delete (02 §4.5).
// vseq and hold are where and how it is held, as the record's head kept
// them; env is its envelope value when at hand (nil: read it).
func (t *tx) demote(d canonical.ID, vseq uint64, hold holding, env []byte) error {
	if !hold.whole || hold.retain || hold.deleted {
		return nil
	}
	if env == nil {
		var ok bool
		var err error
		if env, _, ok, err = t.valueAt(vseq); err != nil {
			return err
		}
		if !ok {
			return Errorf(ErrCorrupt, "damaged: version %s has no value at %d", d, vseq)
		}
	}
	t.set(keys.VersionKey(vseq), versionValue(env, nil))
	if err := t.unnameStored(d, env); err != nil {
		return err
	}
	t.st.stats.BodyBytes -= int64(hold.bodyLen)
	t.st.stats.Whole--
	t.st.stats.Stubs++
	t.final[d] = Stub
	// t.stored keeps the version whole: the judge reads envelopes only
	// (HeldReader.Held), and cutting a copy costs more than it saves.
	return nil
}

// index writes the space registry, the sync order and the writer line;
// tag is v's space's keys.SpaceTag.
func (t *tx) index(d canonical.ID, vseq uint64, v *record.Version, tag [keys.SpaceLen]byte) error {
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
	t.setFresh(keys.AppendOrderKeyTag(t.key(), tag, record.UnixMillis(v.CreatedAt), d), orderValue(vseq, v.Collection))
	return t.line(d, vseq, v, tag)
}

// noteCurrent adds an EventCurrent when a record's readable current
// version (the first that stands, while whole) differs between its head
// before (oh) and after (nh), and tells the Indexer (indexer.go); the
// event's ID is "" when none is readable. at is a decoded whole version of
// the record at hand, or nil.
func (t *tx) noteCurrent(space, key string, oh, nh head, at *record.Version) error {
	if nh.hasFirst == oh.hasFirst && nh.first == oh.first && nh.firstH.whole == oh.firstH.whole {
		return nil
	}
	id := ""
	if nh.hasFirst && nh.firstH.whole {
		id = nh.first.String()
	}
	ixd, err := t.indexCurrent(space, key, oh, nh, at)
	if err != nil {
		return err
	}
	// The event's texts are its own: a version's are cut from the bytes
	// it was read from, which an event waiting in a subscription (weighed
	// by what it carries, weightOf) would otherwise keep.
	own := space + key
	t.events = append(t.events, Event{Kind: EventCurrent, Space: own[:len(space)], Key: own[len(space):], ID: id, Verdict: Stands, Indexed: ixd})
	return nil
}
