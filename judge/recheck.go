package judge

import (
	"context"
	"errors"
	"fmt"
	"github.com/minca-go/minca/canonical"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// Recheck judges every version st holds again, as the full judge would
// against the replay of its space's access history now, and lists each
// whose stored standing differs, or that the judge would not have let in
// (for `minca store check`). A space whose genesis is not held is one
// problem: its versions could not have been judged. notes judges the notes
// versions carry.
func Recheck(ctx context.Context, st *engine.Store, notes record.NoteChecker) ([]string, error) {
	j := NewSpaceJudge(notes)
	j.Source = st
	spaces, err := st.Spaces(ctx)
	if err != nil {
		return nil, err
	}
	var probs []string
	add := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	hr := storeReader{ctx: ctx, st: st}
	for _, spaceID := range spaces {
		h, ok, err := j.History(ctx, spaceID)
		if err != nil {
			return probs, err
		}
		if !ok {
			add("space %s: versions are held but its genesis is not, so none of them was judged", spaceID)
			continue
		}
		for v, err := range st.Export(ctx, spaceID) {
			if err != nil {
				return probs, err
			}
			d, _ := v.Digest()
			stored, _, err := st.Standing(ctx, d)
			if err != nil {
				return probs, err
			}
			want, why, err := j.rejudge(hr, h, v)
			if err != nil {
				return probs, err
			}
			switch {
			case want == engine.Refused:
				add("version %s (%s %s): held %v, but the full judge refuses it: %s", v.ID, v.Collection, v.Key, stored, why)
			case want == engine.Later:
				add("version %s (%s %s): held %v, but what it names is not held: %s", v.ID, v.Collection, v.Key, stored, why)
			case want != stored:
				add("version %s (%s %s): held %v, but the replay says %v%s", v.ID, v.Collection, v.Key, stored, want, why)
			}
			if len(probs) >= 1000 {
				return probs, nil
			}
		}
	}
	return probs, nil
}

// rejudge is Decide for a held version, against the history as it is: no
// change is added.
func (j *SpaceJudge) rejudge(hr engine.HeldReader, h *space.History, v *record.Version) (engine.Verdict, string, error) {
	c, err := j.Base.Check(v)
	if err != nil {
		return engine.Refused, err.Error(), nil
	}
	d, err := j.Base.Decide(hr, v, c)
	if err != nil || d.Verdict != engine.Stands {
		return d.Verdict, reason(d), err
	}
	if r := j.accountWrite(h.Genesis(), v); r != nil {
		return engine.Refused, r.Error(), nil
	}
	if space.IsAccessCollection(v.Collection) {
		_, counts, held := h.Change(v.ID)
		switch {
		case !held:
			ch, err := space.ReadChange(h.Genesis(), v, c.Root, j.env())
			if err == nil {
				err = h.Check(ch)
			}
			return engine.Refused, fmt.Sprint(err), nil
		case counts:
			return engine.Stands, "", nil
		}
		return engine.Withdrawn, ": it does not count in the replay", nil
	}
	j.lock()
	defer j.mu.Unlock()
	d, err = j.decideVersion(hr, h, v, c)
	return d.Verdict, reason(d), err
}

func reason(d engine.Decision) string {
	if d.Refusal == nil {
		return ""
	}
	return ": " + d.Refusal.Error()
}

// storeReader reads a store's committed versions as a judge does.
type storeReader struct {
	ctx context.Context
	st  *engine.Store
}

func (r storeReader) Held(id canonical.ID) (*record.Version, bool, error) {
	v, err := r.st.Version(r.ctx, id)
	if errors.Is(err, engine.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (r storeReader) Standing(id canonical.ID) (engine.Verdict, bool, error) {
	v, _, err := r.st.Standing(r.ctx, id)
	if errors.Is(err, engine.ErrNotFound) {
		return engine.Refused, false, nil
	}
	return v, err == nil, err
}

func (r storeReader) HeldAsIs(id canonical.ID) (*record.Version, bool, error) { return r.Held(id) }

func (r storeReader) ByRoot(space, root string, fn func(id canonical.ID) bool) error {
	return errors.New("minca/judge: a committed store is not listed by root here")
}
