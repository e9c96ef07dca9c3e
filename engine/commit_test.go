package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

// heldKV holds each batch's Commit until released, and fails it when told.
type heldKV struct {
	*memory.Store
	release chan error // a batch commits, or fails, with what it receives
}

type heldBatch struct {
	engine.Batch
	kv *heldKV
}

func (k *heldKV) NewBatch() (engine.Batch, error) {
	b, err := k.Store.NewBatch()
	return &heldBatch{b, k}, err
}

func (b *heldBatch) Commit(d engine.Durability) error {
	if err := <-b.kv.release; err != nil {
		return err
	}
	return b.Batch.Commit(d)
}

func pipelineCorpus(t *testing.T) []*record.Version {
	vs := enginetest.CorpusVersions(t, enginetest.SpaceID("pipeline"), enginetest.CorpusOptions{Versions: 60, Seed: 3})
	return vs
}

func submit(t *testing.T, s *engine.Store, vs []*record.Version) *engine.Admission {
	t.Helper()
	p, err := s.Prepare(context.Background(), vs)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Submit(context.Background(), "p", p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A batch decided while the one before it commits reads what that one
// wrote (every edit of the second batch follows a first version of the
// first); both are durable once their Waits return, and the store checks
// clean.
func TestSubmitBuildsOnCommittingBatch(t *testing.T) {
	vs := pipelineCorpus(t)
	var firsts, edits []*record.Version
	for _, v := range vs {
		if v.Seq == 0 {
			firsts = append(firsts, v)
		} else {
			edits = append(edits, v)
		}
	}
	kv := &heldKV{Store: memory.Open(nil), release: make(chan error)}
	s, err := engine.Open(kv, &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a1 := submit(t, s, firsts)
	a2 := submit(t, s, edits) // decided while a1 is held in Commit
	if len(edits) == 0 {
		t.Fatal("no edits in the corpus")
	}
	if _, err := s.Version(context.Background(), enginetest.Digest(vs[0])); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("a version read before its batch committed: %v", err)
	}
	kv.release <- nil
	kv.release <- nil
	for _, a := range []*engine.Admission{a1, a2} {
		outs, err := a.Wait()
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			if o.Verdict != engine.Stands {
				t.Fatalf("%s: %v (%v)", o.ID, o.Verdict, o.Refusal)
			}
		}
	}
	st, _ := s.Stats(context.Background())
	if st.Versions != int64(len(vs)) || st.Waiting != 0 {
		t.Fatalf("stats %+v", st)
	}
	close(kv.releaseAll())
	if probs, err := s.Check(context.Background(), nil); err != nil || len(probs) > 0 {
		t.Fatalf("check: %v %v", probs, err)
	}
}

// A batch decided on the writes of one whose commit then fails is not
// written either: neither is in the store, the counters are as before,
// and the same versions admit afterwards.
func TestSubmitAfterFailedCommitFails(t *testing.T) {
	vs := pipelineCorpus(t)
	kv := &heldKV{Store: memory.Open(nil), release: make(chan error)}
	s, err := engine.Open(kv, &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a1 := submit(t, s, vs[:31])
	a2 := submit(t, s, vs[31:])
	boom := errors.New("disk on fire")
	kv.release <- boom
	if _, err := a1.Wait(); !errors.Is(err, boom) {
		t.Fatalf("first batch: %v", err)
	}
	if _, err := a2.Wait(); err == nil || !errors.Is(err, boom) {
		t.Fatalf("second batch, decided on the first: %v", err)
	}
	st, _ := s.Stats(context.Background())
	if st != (engine.Stats{}) {
		t.Fatalf("stats after two failed batches: %+v", st)
	}
	for _, v := range vs {
		if _, err := s.Version(context.Background(), enginetest.Digest(v)); !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("%s held after its batch failed: %v", v.ID, err)
		}
	}
	close(kv.releaseAll())
	outs, err := s.Admit(context.Background(), "p", vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Verdict != engine.Stands {
			t.Fatalf("%s: %v", o.ID, o.Verdict)
		}
	}
	if probs, err := s.Check(context.Background(), nil); err != nil || len(probs) > 0 {
		t.Fatalf("check: %v %v", probs, err)
	}
}

// releaseAll makes a channel that lets every later commit through.
func (k *heldKV) releaseAll() chan error {
	c := make(chan error)
	k.release = c
	return c
}
