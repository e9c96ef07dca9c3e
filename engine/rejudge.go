package engine

import (
	"context"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// Restander is a Judge whose verdicts on held versions change when what it
// judges them by grows (02 §9.4, §9.5: a version is withdrawn when a later
// change takes away what it was written under, and stands again when that
// change is struck). After each version it lets in is stored, in the same
// batch, the store asks it which held versions' standing to change, and
// changes them in that batch as [Store.SetStanding] does, heads and
// demotions included. It is found by type assertion; a Judge without it
// never changes a standing by itself. Restand reads what it needs through
// h, which also implements [Lister].
type Restander interface {
	Restand(h HeldReader, v *record.Version, verdict Verdict) ([]Restanding, error)
}

// Restanding is a held version's new standing, Stands or Withdrawn.
type Restanding struct {
	ID canonical.ID
	To Verdict
}

// Forgetter is a Judge that keeps in memory what it let in. It is told,
// by type assertion, when a batch it decided is not written — deciding it
// failed, or its commit did, and with it every batch decided after it — so
// it can forget what that batch would have held and read it again from the
// store.
type Forgetter interface {
	Unwritten()
}

// Lister is what a judge's re-judging reads beyond [HeldReader]. The
// HeldReader the store gives Decide and Restand implements it.
type Lister interface {
	// ByRoot calls fn with the id of each held version of space admitted
	// under root (the Checked.Root its Check gave), in no particular
	// order, until fn returns false.
	ByRoot(space, root string, fn func(id canonical.ID) bool) error
	// HeldAsIs returns a held version as it is held: whole, or a stub once
	// superseded and not retained (02 §4.5).
	HeldAsIs(id canonical.ID) (*record.Version, bool, error)
}

var _ Lister = (*tx)(nil)

// ByRoot implements Lister. An entry names its version by vseq, or (a
// store of a layout before 12) by digest; a vseq is read back to its id,
// which costs a read a version, but only re-judging asks.
func (t *tx) ByRoot(space, root string, fn func(id canonical.ID) bool) error {
	p := keys.RootPrefix(space, root)
	var ds []canonical.ID
	var vseqs []uint64
	err := t.scan(p, keys.PrefixEnd(p), func(k, _ []byte) bool {
		vseq, d, byVseq, ok := keys.RootEntry(k)
		switch {
		case !ok: // damage check names
		case byVseq:
			vseqs = append(vseqs, vseq)
		default:
			ds = append(ds, d)
		}
		return true
	})
	if err != nil {
		return err
	}
	for _, vseq := range vseqs {
		d, err := t.idAt("a root index entry", vseq)
		if err != nil {
			return err
		}
		ds = append(ds, d)
	}
	for _, d := range ds {
		if !fn(d) {
			return nil
		}
	}
	return nil
}

// idAt is the id of the version whose value is at vseq, as this batch
// sees it; what (a root index entry, a history entry) names it there, and
// a vseq naming no value is damage.
func (t *tx) idAt(what string, vseq uint64) (canonical.ID, error) {
	env, _, ok, err := t.valueAt(vseq)
	if err != nil {
		return canonical.ID{}, err
	}
	if !ok {
		return canonical.ID{}, Errorf(ErrCorrupt, "damaged: %s names version value %d, which is not there", what, vseq)
	}
	return idOfEnvelope(vseq, env)
}

// HeldAsIs implements Lister.
func (t *tx) HeldAsIs(d canonical.ID) (*record.Version, bool, error) {
	_, env, body, ok, err := t.version(d)
	if !ok || err != nil {
		return nil, false, err
	}
	v, err := decodeHeld(env, body)
	return v, err == nil, err
}

// indexRoot files a stored version, its value at vseq, under the root it
// was admitted with, in the space tagged tag (keys.SpaceTag).
func (t *tx) indexRoot(vseq uint64, tag [keys.SpaceLen]byte, root string) {
	t.setFresh(keys.AppendRootKeyTag(t.key(), tag, root, vseq), []byte{})
}

// restand asks a Restander judge what v's storing changes, and changes it.
func (t *tx) restand(v *record.Version, verdict Verdict) error {
	r, ok := t.j.(Restander)
	if !ok {
		return nil
	}
	rs, err := r.Restand(t, v, verdict)
	if err != nil {
		return err
	}
	for _, x := range rs {
		if x.To != Stands && x.To != Withdrawn {
			return fmt.Errorf("minca/engine: the judge restands %s as %v, not a standing", x.ID, x.To)
		}
		d := x.ID
		if _, err := t.setStanding(d, x.To); err != nil {
			return fmt.Errorf("minca/engine: restanding %s: %w", x.ID, err)
		}
		if t.restood == nil {
			t.restood = map[canonical.ID]Verdict{}
		}
		t.restood[d] = x.To
	}
	return nil
}

// unwritten tells a Forgetter judge that a batch it decided is not written.
func unwritten(j Judge) {
	if f, ok := j.(Forgetter); ok {
		f.Unwritten()
	}
}

// Wake re-judges, in one synced batch, the versions waiting for id as if a
// version with that id had just been stored: for what a judge waits for
// that is not a version (a space's genesis, which a judge keeps itself and
// names by the space's id). Durable when it returns.
func (s *Store) Wake(ctx context.Context, id canonical.ID) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	j := s.opts.Judge
	if j == nil {
		return ErrNoJudge
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	t := s.begin(j, 1)
	t.queue = append(t.queue, id)
	if err := t.drain(); err != nil {
		unwritten(j)
		return fmt.Errorf("minca/engine: wake %s: %w", id, err)
	}
	return s.commit(t)
}
