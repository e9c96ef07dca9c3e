package engine

import (
	"bytes"
	"errors"

	"github.com/minca-go/minca/engine/internal/keys"
)

// A record's first standing version — the one that reads (02 §4.3) — is
// kept whole in the record's head ('h' rec), so that reading it is one
// point read. Since layout 11 that copy is its only home: its own value
// ('v' vseq) holds a marker naming the record instead, and gets its
// envelope (and body, while it is held whole) back when another version
// takes its place. Layout 10 and before kept the value in both places;
// such values are read as they are and become markers when their record
// next changes.
//
// A marker is 0 ‖ rec. A version value starts with its envelope's length,
// a uvarint, and an envelope is never empty, so a value never starts with
// 0.

// markerValue is the 'v' value of a record's first standing version.
func markerValue(rec []byte) []byte {
	return append(append(make([]byte, 0, 1+len(rec)), 0), rec...)
}

// markedRec returns the record a 'v' value names, when it is a marker.
func markedRec(vb []byte) ([]byte, bool) {
	if len(vb) > 0 && vb[0] == 0 {
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

// valueAt reads the envelope and body (nil for a stub) of the version at
// vseq as this batch sees them, following a marker to its record's head;
// ok false when there is no value at vseq.
func (t *tx) valueAt(vseq uint64) (env, body []byte, ok bool, err error) {
	vb, ok, err := t.get(keys.VersionKey(vseq))
	if !ok || err != nil {
		return nil, nil, ok, err
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
// vb, the value read at vseq. A marker is followed to its record's head.
// r is not a snapshot: a batch committed between the two reads may have
// given the version's value back and moved the head on, so a head that
// does not hold it has the value read again, and damage is what stays.
func readValue(r Reader, vseq uint64, vb []byte) (env, body []byte, err error) {
	for try := 0; ; try++ {
		rec, marked := markedRec(vb)
		if !marked {
			return splitVersion(vb)
		}
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
		again, err := r.Get(keys.VersionKey(vseq))
		if err != nil {
			return nil, nil, err
		}
		if try > 0 && bytes.Equal(again, vb) {
			return nil, nil, errMarkerAstray(vseq)
		}
		vb = again
	}
}

// giveBack writes a record's former first standing version's value in
// full again (its envelope, and its body while whole): the head that held
// it holds another now. demote, when it follows, drops the body.
func (t *tx) giveBack(oh head) {
	if oh.hasFirst {
		t.set(keys.VersionKey(oh.firstV), versionValue(oh.firstEnv, oh.firstBody))
	}
}
