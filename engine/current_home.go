package engine

import (
	"bytes"
	"errors"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
)

// A record's first standing version — the one that reads (02 §4.3) — has
// its value in a table of its own since layout 16: 'c' vseq holds it, as
// 'v' vseq holds every other version's, and 'v' vseq holds the one byte 0
// (currentMark) in its place. The record's head names the vseq and no
// longer holds the value. So a peer's WANT (02 §9) is answered by reading
// 'v' and 'c' in vseq order, with no head read for the current versions
// among the asked (bench/REPORT-sync.md), and a record's current version
// is read by two point reads, its small head and then its value in 'c': a
// table of the current versions alone, a third of the values, which a
// read finds in the block cache where 'v' (every version) would not be.
// The value moves between 'c' and 'v' in the batch that makes its version
// the first standing one or another in its place (setHead).
//
// Layouts 11 to 15 kept that value in the record's head alone, and its
// own value held a marker naming the record; layout 10 and before kept it
// in both places. Such heads and markers are read as they are (a marker
// followed to the head); the batch that next writes such a head writes
// it in this layout, the value moved from the head to 'c' or 'v'.
//
// A marker is 0 ‖ rec, the mark in 'v' of a value in 'c' the one byte 0.
// A version value starts with its envelope's length, a uvarint, and an
// envelope is never empty, so a value never starts with 0.

// currentMark is the 'v' value of a version whose value is in 'c'.
var currentMark = []byte{0}

// inCurrent reports whether a 'v' value says the value is in 'c'.
func inCurrent(vb []byte) bool { return len(vb) == 1 && vb[0] == 0 }

// markedRec returns the record a 'v' value names, when it is a marker.
func markedRec(vb []byte) ([]byte, bool) {
	if len(vb) > 1 && vb[0] == 0 {
		return vb[1:], true
	}
	return nil, false
}

// fromHead returns the envelope and body a head holds of its first
// standing version, when that version is the one at vseq.
func fromHead(hb []byte, vseq uint64) (env, body []byte, ok bool, err error) {
	h, err := decodeHead(hb)
	if err != nil {
		return nil, nil, false, err
	}
	if !h.hasFirst || h.firstV != vseq {
		return nil, nil, false, nil
	}
	return h.firstEnv, h.firstBody, true, nil
}

// errAstray: a version value says its record's head holds it, and the
// head holds another (or none).
var errAstray = errors.New("its record's head does not hold it")

func errMarkerAstray(vseq uint64) error {
	return Errorf(ErrCorrupt, "damaged: version value %d: %w", vseq, errAstray)
}

// errNoCurrent: a version value says its value is in 'c', and it is not.
var errNoCurrent = errors.New("its value is not among the current versions'")

func errCurrentAstray(vseq uint64) error {
	return Errorf(ErrCorrupt, "damaged: version value %d: %w", vseq, errNoCurrent)
}

// valueAt reads the envelope and body (nil for a stub) of the version at
// vseq as this batch sees them, following a marker to its record's head;
// ok false when there is no value at vseq.
func (t *tx) valueAt(vseq uint64) (env, body []byte, ok bool, err error) {
	vb, ok, err := t.get(keys.VersionKey(vseq))
	if !ok || err != nil {
		return nil, nil, ok, err
	}
	if inCurrent(vb) {
		if vb, ok, err = t.get(keys.CurrentKey(vseq)); err != nil {
			return nil, nil, false, err
		}
		if !ok {
			return nil, nil, false, errCurrentAstray(vseq)
		}
		env, body, err = splitVersion(vb)
		return env, body, err == nil, err
	}
	rec, marked := markedRec(vb)
	if !marked {
		env, body, err = splitVersion(vb)
		return env, body, err == nil, err
	}
	hb, ok, err := t.get(keys.HeadKey(rec))
	if err != nil {
		return nil, nil, false, err
	}
	if ok {
		if env, body, ok, err = fromHead(hb, vseq); ok || err != nil {
			return env, body, ok, err
		}
	}
	return nil, nil, false, errMarkerAstray(vseq)
}

// readValue is the envelope and body of the version at vseq from r, given
// vb, the value read at vseq. A mark is followed to 'c', a marker to its
// record's head. r is not a snapshot: a batch committed between the two
// reads may have moved the version's value back to 'v' (its record has
// another current version now), so a value not found where vb said has
// the value read again, and damage is what stays.
func readValue(r Reader, vseq uint64, vb []byte) (env, body []byte, err error) {
	for try := 0; ; try++ {
		if inCurrent(vb) {
			cb, err := r.Get(keys.CurrentKey(vseq))
			if err == nil {
				return splitVersion(cb)
			}
			if !errors.Is(err, ErrNotFound) {
				return nil, nil, err
			}
		} else if rec, marked := markedRec(vb); !marked {
			return splitVersion(vb)
		} else {
			hb, err := r.Get(keys.HeadKey(rec))
			if err != nil && !errors.Is(err, ErrNotFound) {
				return nil, nil, err
			}
			if err == nil {
				env, body, ok, err := fromHead(hb, vseq)
				if ok || err != nil {
					return env, body, err
				}
			}
		}
		again, err := r.Get(keys.VersionKey(vseq))
		if err != nil {
			return nil, nil, err
		}
		if try > 0 && bytes.Equal(again, vb) {
			if inCurrent(vb) {
				return nil, nil, errCurrentAstray(vseq)
			}
			return nil, nil, errMarkerAstray(vseq)
		}
		vb = again
	}
}

// setHead writes a record's head nh in this layout over oh, its head as
// read (had: there was one), and moves the values it names: a former
// first standing version's value goes back to 'v' (from 'c', or from oh
// when oh holds it, as layouts 11 to 15 wrote it), and nh's first's goes
// to 'c', its 'v' marked. fresh is a vseq whose value this batch already
// put in 'c' and marked (0: none). demote, when it follows, drops the
// former first's body from 'v'.
func (t *tx) setHead(rec []byte, oh, nh head, had bool, fresh uint64) error {
	same := had && oh.hasFirst && nh.hasFirst && oh.firstV == nh.firstV
	if had && oh.hasFirst && !same {
		env, body := oh.firstEnv, oh.firstBody
		if !oh.inHead {
			var err error
			if env, body, err = t.currentValue(oh.first, oh.firstV); err != nil {
				return err
			}
			t.del(keys.CurrentKey(oh.firstV))
		}
		t.set(keys.VersionKey(oh.firstV), versionValue(env, body))
	}
	if nh.hasFirst && nh.firstV != fresh && (!same || oh.inHead) {
		env, body := oh.firstEnv, oh.firstBody // same: oh holds it
		if !same && nh.firstEnv != nil {
			env, body = nh.firstEnv, nh.firstBody // read by firstStanding
		} else if !same {
			var ok bool
			var err error
			if env, body, ok, err = t.valueAt(nh.firstV); err != nil {
				return err
			}
			if !ok {
				return Errorf(ErrCorrupt, "damaged: version %s has no value at %d", nh.first, nh.firstV)
			}
		}
		t.set(keys.CurrentKey(nh.firstV), versionValue(env, body))
		t.set(keys.VersionKey(nh.firstV), currentMark)
	}
	t.set(keys.AppendHeadKey(t.key(), rec), nh.encode())
	return nil
}

// currentValue reads the value of version d from 'c' vseq, as this batch
// sees it.
func (t *tx) currentValue(d canonical.ID, vseq uint64) (env, body []byte, err error) {
	cb, ok, err := t.get(keys.CurrentKey(vseq))
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, Errorf(ErrCorrupt, "damaged: version %s: %v", d, errNoCurrent)
	}
	return splitVersion(cb)
}

// firstValue is the envelope and body (nil for a stub) of h's first
// standing version: from the head when it holds them, else read at its
// vseq.
func (t *tx) firstValue(h head) (env, body []byte, err error) {
	if h.firstEnv != nil || !h.hasFirst {
		return h.firstEnv, h.firstBody, nil
	}
	env, body, ok, err := t.valueAt(h.firstV)
	if err == nil && !ok {
		err = Errorf(ErrCorrupt, "damaged: version %s has no value at %d", h.first, h.firstV)
	}
	return env, body, err
}
