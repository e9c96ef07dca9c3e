package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// Refusal codes the store itself gives, for what no judge should let
// through but the key layout cannot hold.
const (
	CodeStoreID    = "store/id"    // the id is not a content id in its canonical text
	CodeStoreSpace = "store/space" // a version with no space (a loose one, 02 §3.5) is not stored
)

// ErrNoJudge: a write was asked of a store opened without a judge.
var ErrNoJudge = errors.New("minca/engine: the store was opened without a judge")

func canonicalID(id string) (canonical.ID, bool) {
	d, err := canonical.ParseID(id)
	return d, err == nil
}

// Admit takes in a batch of versions from one source (a peer, a folder, an
// import; from names it for the refusals remembered). Each goes through the
// judge — Check on every core, then Decide in order — and everything is
// committed in one atomic batch, synced, before Admit returns (02 §9). It
// returns one Outcome per version, in order. Versions waiting for what
// another version of the batch brings are re-judged in the same batch, so
// their outcome is final.
//
// Admitting a version already held changes nothing, except that a whole
// copy of a held stub adds its body when that version is current or
// retained (02 §4.5). Calls may overlap: the checks of one run while
// another commits.
func (s *Store) Admit(ctx context.Context, from string, vs []*record.Version) ([]Outcome, error) {
	p, err := s.Prepare(ctx, vs)
	if err != nil {
		return nil, err
	}
	return s.AdmitPrepared(ctx, from, p)
}

// Prepared is a batch whose stateless checks ([Judge.Check]) have run:
// [Store.Prepare] makes one without taking the store's write lock, so a
// caller can check the next batch while [Store.AdmitPrepared] commits this
// one.
type Prepared struct {
	vs      []*record.Version
	outs    []Outcome
	checked []Checked
	refused []bool
}

// Prepare runs Judge.Check over vs on every core (Options.Workers).
func (s *Store) Prepare(ctx context.Context, vs []*record.Version) (*Prepared, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	j := s.opts.Judge
	if j == nil {
		return nil, ErrNoJudge
	}
	p := &Prepared{vs: vs, outs: make([]Outcome, len(vs)), checked: make([]Checked, len(vs)), refused: make([]bool, len(vs))}
	errs := make([]error, len(vs))
	s.checkAll(ctx, j, vs, p.checked, errs)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, err := range errs {
		p.outs[i].ID = vs[i].ID
		if err == nil {
			continue
		}
		var r *record.Refusal
		if !errors.As(err, &r) {
			return nil, fmt.Errorf("minca/engine: admit: checking %s: %w", vs[i].ID, err)
		}
		p.outs[i] = Outcome{ID: vs[i].ID, Verdict: Refused, Refusal: r}
		p.refused[i] = true
	}
	return p, nil
}

// AdmitPrepared is the rest of [Store.Admit]: the judge's Decide in order
// and one synced commit. A Prepared is admitted once.
func (s *Store) AdmitPrepared(ctx context.Context, from string, p *Prepared) ([]Outcome, error) {
	j := s.opts.Judge
	if j == nil {
		return nil, ErrNoJudge
	}
	vs, outs, checked, refused := p.vs, p.outs, p.checked, p.refused
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	t, err := s.begin(j)
	if err != nil {
		return nil, err
	}
	defer t.b.Close()
	t.outs = outs
	for i, v := range vs {
		if refused[i] {
			continue
		}
		if err := t.admitOne(i, v, checked[i], from); err != nil {
			return nil, fmt.Errorf("minca/engine: admit %s: %w", v.ID, err)
		}
	}
	for i := range outs {
		if v := outs[i].Verdict; v == Stands || v == Withdrawn {
			if d, ok := keys.ParseExact(outs[i].ID); ok {
				if st, ok := t.final[d]; ok {
					outs[i].Stored = st
				}
			}
		}
		if outs[i].Verdict == Refused {
			if d, ok := canonicalID(outs[i].ID); ok {
				t.refused = append(t.refused, refusal{from, d})
			}
		}
	}
	if err := s.commit(t); err != nil {
		return nil, err
	}
	return outs, nil
}

// checkAll runs Judge.Check over vs on Options.Workers goroutines.
func (s *Store) checkAll(ctx context.Context, j Judge, vs []*record.Version, out []Checked, errs []error) {
	n := min(s.opts.Workers, len(vs))
	if n <= 1 {
		for i, v := range vs {
			out[i], errs[i] = j.Check(v)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(vs) {
					return
				}
				out[i], errs[i] = j.Check(vs[i])
			}
		}()
	}
	wg.Wait()
}

// commit writes the counters, commits the batch with sync and then makes
// what it did visible in memory: counters, cache, refusals, events.
func (s *Store) commit(t *tx) error {
	if err := t.b.Set(keys.InternalKey(stateName), t.st.encode()); err != nil {
		return err
	}
	if err := t.b.Commit(true); err != nil {
		return fmt.Errorf("minca/engine: commit: %w", err)
	}
	s.st = t.st
	s.st.stats.Changes = int64(s.st.changeSeq)
	for d, v := range t.stored {
		s.cache.put(d, v)
	}
	for sp := range t.spaces {
		if s.spaces == nil {
			s.spaces = make(map[string]bool)
		}
		s.spaces[sp] = true
	}
	for _, r := range t.refused {
		s.refusals.add(r.peer, r.id)
	}
	s.subs.publish(t.events)
	return nil
}
