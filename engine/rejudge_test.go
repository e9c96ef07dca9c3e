package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

// gate is what the flip judge's gated versions wait for: an id no version
// has.
var gate = canonical.IDOf([]byte("gate"))

// flipJudge is judge.Judge plus a control collection: a version of "ctl"
// with body {"withdraw": [ids], "restore": [ids]} restands those held
// versions in the batch that stores it (a Restander); versions of "gated"
// wait for the gate until open; and it counts the batches it is told were
// not written (a Forgetter).
type flipJudge struct {
	judge.Judge
	open      atomic.Bool
	fail      string // Decide errors on this id
	unwritten atomic.Int32
	byRoot    map[string][]canonical.ID // what ByRoot listed when a ctl version was stored
}

func (j *flipJudge) Decide(h engine.HeldReader, v *record.Version, c engine.Checked) (engine.Decision, error) {
	if v.ID == j.fail {
		return engine.Decision{}, errors.New("deciding failed")
	}
	if v.Collection == "gated" && !j.open.Load() {
		return engine.Decision{Verdict: engine.Later, Waits: []string{gate.String()}}, nil
	}
	return j.Judge.Decide(h, v, c)
}

func (j *flipJudge) Restand(h engine.HeldReader, v *record.Version, verdict engine.Verdict) ([]engine.Restanding, error) {
	if v.Collection != "ctl" {
		return nil, nil
	}
	l := h.(engine.Lister)
	if j.byRoot == nil {
		j.byRoot = map[string][]canonical.ID{}
	}
	j.byRoot[v.Author] = nil
	if err := l.ByRoot(v.Space, v.Author, func(id canonical.ID) bool { j.byRoot[v.Author] = append(j.byRoot[v.Author], id); return true }); err != nil {
		return nil, err
	}
	o := v.Body.(*canonical.Object)
	var out []engine.Restanding
	for name, to := range map[string]engine.Verdict{"withdraw": engine.Withdrawn, "restore": engine.Stands} {
		list, _ := o.Get(name)
		for _, id := range list.([]any) {
			d, err := canonical.ParseID(id.(string))
			if err != nil {
				return nil, err
			}
			if _, ok, err := l.HeldAsIs(d); err != nil || !ok {
				return nil, errors.New("restanding a version not held")
			}
			out = append(out, engine.Restanding{ID: d, To: to})
		}
	}
	return out, nil
}

func (j *flipJudge) Unwritten() { j.unwritten.Add(1) }

func ctlBody(withdraw, restore []string) *canonical.Object {
	w, r := []any{}, []any{}
	for _, id := range withdraw {
		w = append(w, id)
	}
	for _, id := range restore {
		r = append(r, id)
	}
	return canonical.NewObject("withdraw", w, "restore", r)
}

func admitAll(t *testing.T, s *engine.Store, vs ...*record.Version) []engine.Outcome {
	t.Helper()
	outs, err := s.Admit(context.Background(), "p", vs)
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

func currentOf(t *testing.T, s *engine.Store, space, key string) string {
	t.Helper()
	v, err := s.Current(context.Background(), space, key)
	if errors.Is(err, engine.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return v.ID
}

// A Restander's standing changes land in the batch that stores the version
// that caused them, both ways, with the record's current version and the
// outcomes of the batch's own versions following; ByRoot lists what the
// root wrote, that batch's versions included.
func TestRestandInTheSameBatch(t *testing.T) {
	sp := enginetest.SpaceID("restand")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	a0 := mustV(t)(w.First("app.note", "0", enginetest.Retain))
	a1 := mustV(t)(w.Next(a0, "1"))
	j := &flipJudge{}
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: j})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c1 := mustV(t)(w.First("ctl", ctlBody([]string{a1.ID}, nil)))
	outs := admitAll(t, s, a0, a1, c1)
	if outs[1].Verdict != engine.Withdrawn {
		t.Fatalf("a1 withdrawn in its own batch reports %v", outs[1].Verdict)
	}
	if got := currentOf(t, s, sp, a0.Key); got != a0.ID {
		t.Fatalf("a1 withdrawn: the retained a0 reads, got %q", got)
	}
	if len(j.byRoot[w.Key.DID()]) != 3 {
		t.Fatalf("ByRoot listed %v, want the batch's three", j.byRoot[w.Key.DID()])
	}
	c2 := mustV(t)(w.First("ctl", ctlBody(nil, []string{a1.ID})))
	admitAll(t, s, c2)
	if got := currentOf(t, s, sp, a0.Key); got != a1.ID {
		t.Fatalf("a1 restored reads again, got %q", got)
	}
	if st, _, _ := s.Standing(context.Background(), enginetest.Digest(a1)); st != engine.Stands {
		t.Fatalf("a1 %v", st)
	}
	if probs, err := s.Check(context.Background(), nil); err != nil || len(probs) > 0 {
		t.Fatalf("check: %v %v", probs, err)
	}
}

// Wake re-judges the versions waiting for what is not a version.
func TestWakeRejudgesWaiters(t *testing.T) {
	sp := enginetest.SpaceID("wake")
	w, _ := enginetest.NewWriter(sp)
	g := mustV(t)(w.First("gated", "x"))
	j := &flipJudge{}
	s, _ := engine.Open(memory.Open(nil), &engine.Options{Judge: j})
	defer s.Close()
	if o := admitAll(t, s, g); o[0].Verdict != engine.Later {
		t.Fatalf("%v", o[0].Verdict)
	}
	if err := s.Wake(context.Background(), gate); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Standing(context.Background(), enginetest.Digest(g)); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("still closed, it still waits: %v", err)
	}
	j.open.Store(true)
	if err := s.Wake(context.Background(), gate); err != nil {
		t.Fatal(err)
	}
	if st, _, err := s.Standing(context.Background(), enginetest.Digest(g)); err != nil || st != engine.Stands {
		t.Fatalf("woken: %v %v", st, err)
	}
}

// A Forgetter is told of a batch it decided that was not written: when
// deciding fails, and when the commit does.
func TestForgetterToldOfUnwrittenBatches(t *testing.T) {
	sp := enginetest.SpaceID("forget")
	w, _ := enginetest.NewWriter(sp)
	a := mustV(t)(w.First("app.note", "a"))
	b := mustV(t)(w.First("app.note", "b"))
	j := &flipJudge{fail: b.ID}
	kv := &heldKV{Store: memory.Open(nil), release: make(chan error, 1)}
	s, _ := engine.Open(kv, &engine.Options{Judge: j})
	defer s.Close()
	if _, err := s.Admit(context.Background(), "p", []*record.Version{a, b}); err == nil {
		t.Fatal("deciding failed, yet Admit succeeded")
	}
	if j.unwritten.Load() != 1 {
		t.Fatalf("told %d times, want 1", j.unwritten.Load())
	}
	j.fail = ""
	kv.release <- errors.New("disk gone")
	if _, err := s.Admit(context.Background(), "p", []*record.Version{a}); err == nil {
		t.Fatal("the commit failed, yet Admit succeeded")
	}
	if j.unwritten.Load() != 2 {
		t.Fatalf("told %d times, want 2", j.unwritten.Load())
	}
}
