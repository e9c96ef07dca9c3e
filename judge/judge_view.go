package judge

import (
	"context"
	"errors"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// WithHistory calls fn with a space's access history as this judge holds
// it, under the judge's lock, so nothing is admitted while fn reads it;
// ok is false (and fn not called) when the space's genesis is not held.
// fn must not admit anything.
func (j *SpaceJudge) WithHistory(ctx context.Context, spaceID string, fn func(h *space.History) error) (ok bool, err error) {
	j.lock()
	defer j.mu.Unlock()
	h, err := j.space(ctx, spaceID)
	if err != nil || h == nil {
		return false, err
	}
	return true, fn(h)
}

// Preview judges a version as Decide would, after Check gave c, and
// changes nothing: what a writer asks before it signs (02 §9.6, §4.10: a
// version refused before it leaves gives its place back). v needs no
// signature (record.Presigned's Provisional): Decide reads none. An access
// change is judged by the replay's Check (its author could make it as of
// its seen) without being added, so a change that would be withdrawn at
// once by a concurrent one previews as standing.
func (j *SpaceJudge) Preview(hr engine.HeldReader, v *record.Version, c engine.Checked) (engine.Decision, error) {
	if !space.IsAccessCollection(v.Collection) {
		return j.Decide(hr, v, c)
	}
	d, err := j.Base.Decide(hr, v, c)
	if err != nil || d.Verdict != engine.Stands {
		return d, err
	}
	var out engine.Decision
	ok, err := j.WithHistory(context.Background(), v.Space, func(h *space.History) error {
		if r := j.accountWrite(h.Genesis(), v); r != nil {
			out = refusedBy(r)
			return nil
		}
		ch, err := space.ReadChange(h.Genesis(), v, c.Root, j.env())
		if err != nil {
			out, err = refused(err)
			return err
		}
		err = h.Check(ch)
		var m *space.MissingError
		switch {
		case errors.As(err, &m):
			out, err = j.missing(hr, v, m)
			return err
		case err != nil:
			out, err = refused(err)
			return err
		}
		out = engine.Decision{Verdict: engine.Stands}
		return nil
	})
	if err != nil {
		return engine.Decision{}, err
	}
	if !ok {
		return engine.Decision{Verdict: engine.Later, Waits: []string{v.Space}}, nil
	}
	return out, nil
}
