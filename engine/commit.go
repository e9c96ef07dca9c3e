package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/minca-go/minca/engine/internal/keys"
)

// Admission pipelining: a batch is decided under Store.mu, then committed
// by a goroutine of its own, in order after the batch decided before it,
// while the next batch is decided. The next batch reads what this one
// wrote from its writes in memory (tx.prev) until they are in the store;
// at most one batch is committing while another is decided. A batch whose
// predecessor failed to commit fails too, without writing: it was decided
// on writes that never landed.

// Admission is a batch decided by [Store.Submit], committing.
type Admission struct {
	t      *tx
	outs   []Outcome
	stored int // versions the batch stored new, woken ones included
}

// Wait returns the batch's outcomes once it is committed and synced (or
// why it was not: then none of it is in the store).
func (a *Admission) Wait() ([]Outcome, error) {
	<-a.t.done
	if a.t.err != nil {
		return nil, a.t.err
	}
	return a.outs, nil
}

// Submit decides a prepared batch at once — in the order of Submit calls —
// and commits it in the background: the caller decides the next batch
// while this one is written, and waits for this one's outcomes with
// [Admission.Wait] before it acknowledges anything (nothing is durable
// before). [Store.AdmitPrepared] is Submit then Wait.
func (s *Store) Submit(ctx context.Context, from string, p *Prepared) (*Admission, error) {
	j := s.opts.Judge
	if j == nil {
		return nil, ErrNoJudge
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fill := s.takeFill(p.fill)
	t := s.begin(j, len(p.vs))
	if fill == nil && p.fill != nil {
		var err error
		if fill, err = t.startFill(p.fill); err != nil {
			unwritten(j)
			return nil, err
		}
	}
	t.fill = fill
	if a := p.ahead; a != nil && a.current(s) {
		// What was read ahead for the batch is still what the store
		// holds, but for the batch committing, read through in memory
		// (readAheadFor).
		t.ahead, p.ahead = a.m, nil
	}
	held := t.st.stats.Versions
	if err := t.decide(from, p); err != nil {
		unwritten(j)
		return nil, err
	}
	if err := t.seal(); err != nil {
		unwritten(j)
		return nil, err
	}
	if fill != nil {
		s.keepFill(fill)
	}
	prev := t.prev
	t.before = p.before
	s.inflight = t
	go s.commitAfter(t, prev)
	return &Admission{t: t, outs: p.outs, stored: int(t.st.stats.Versions - held)}, nil
}

// settle waits until no batch is committing; with Store.mu held, none
// starts.
func (s *Store) settle() {
	if t := s.inflight; t != nil {
		<-t.done
		s.inflight = nil
	}
}

// seal adds the batch's change log entry and the counters to its writes;
// nothing is written to t after.
func (t *tx) seal() error {
	if len(t.pend) > 0 {
		entry, format, err := t.sealChanges()
		if err != nil {
			return err
		}
		t.set(append(keys.ChangeKey(t.st.changeSeq), format), entry)
	}
	t.set(keys.InternalKey(stateName), t.st.encode())
	return nil
}

// commitAfter commits t once prev (the batch decided before it, nil when
// none was committing) is committed, and marks t done.
func (s *Store) commitAfter(t, prev *tx) {
	defer close(t.done)
	if prev != nil {
		<-prev.done
		if prev.err != nil {
			t.err = fmt.Errorf("minca/engine: commit: the batch before this one failed, this one is not written: %w", prev.err)
			unwritten(t.j)
			return
		}
	}
	if t.before != nil {
		if err := t.before(); err != nil {
			t.err = fmt.Errorf("minca/engine: commit: not written: %w", err)
			unwritten(t.j)
			return
		}
	}
	if t.err = s.write(t); t.err != nil {
		unwritten(t.j)
	}
}

// commit seals and writes a batch made while holding Store.mu with no
// batch committing (SetStanding).
func (s *Store) commit(t *tx) error {
	err := t.seal()
	if err == nil {
		err = s.write(t)
	}
	if err != nil {
		unwritten(t.j)
	}
	t.err = err
	close(t.done)
	return err
}

// write commits a sealed batch with sync, then makes what it did visible
// in memory: counters, cache, spaces, refusals, events.
func (s *Store) write(t *tx) error {
	b, err := s.kv.NewBatch()
	if err != nil {
		return fmt.Errorf("minca/engine: batch: %w", err)
	}
	defer b.Close()
	// In key order: Pebble's memtable finds where each key goes from where
	// the last one went, so sorted writes cost about half as much to
	// insert as the map's random order.
	ks := make([]string, 0, len(t.w))
	for k := range t.w {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		// The map's own key, no copy: it is not changed while the batch
		// lives, and the batch does not change it.
		w, key := t.w[k], keyBytes(k)
		if w.del {
			err = b.Delete(key)
		} else {
			err = b.Set(key, w.val)
		}
		if err != nil {
			return fmt.Errorf("minca/engine: batch: %w", err)
		}
	}
	err = b.Commit(Sync)
	// Whatever the KV made of it, what was read before is old: for its
	// keys at least, when they are known.
	n := s.applied.Add(1)
	var last *appliedBatch
	if len(t.w) <= maxAppliedKeys {
		last = s.lastApplied.Swap(&appliedBatch{n: n, w: t.w})
	} else {
		last = s.lastApplied.Swap(nil)
	}
	if last != nil {
		// The batch before this one: decided before this one was, read
		// by none since (the batch decided after this one reads this
		// one's), its map is free once no longer the last applied.
		s.spareWrites.Put(last.w)
	}
	if err != nil {
		return fmt.Errorf("minca/engine: commit: %w", err)
	}
	s.state.Lock()
	if t.st.stats.Waiting != s.st.stats.Waiting {
		t.events = append(t.events, Event{Kind: EventWaiting, Count: t.st.stats.Waiting})
	}
	s.st = t.st
	s.st.stats.Changes = int64(s.st.changeSeq)
	for d, v := range t.stored {
		s.cache.put(d, v, t.weight[d])
	}
	s.publishSources(t)
	for sp := range t.spaces {
		if s.spaces == nil {
			s.spaces = make(map[string]bool)
		}
		s.spaces[sp] = true
	}
	if t.lacks {
		s.fileNamed.fire()
	}
	s.state.Unlock()
	for _, r := range t.refused {
		s.refusals.add(r.peer, r.id)
	}
	s.subs.publish(t.events, t.weight)
	s.reclaimDropped(t.dropped)
	return nil
}

// reclaimDropped counts the bytes of waiting versions a committed batch
// dropped, and past WaitingLimits.MaxDroppedBytes has a Reclaimer KV give
// their space back, before the batch is acknowledged: what versions that
// never stand take on disk is then bounded by the waiting bounds plus
// MaxDroppedBytes, whenever the KV would have compacted them. Only the
// waiting entries ('w') are rewritten: they hold the versions; the other
// waiting keys are small. A failure is not the batch's, which is
// committed: the bytes stay counted, and the next batch that drops
// tries again.
func (s *Store) reclaimDropped(dropped int64) {
	s.unreclaimed += dropped
	if dropped == 0 || s.unreclaimed < s.opts.Waiting.MaxDroppedBytes {
		return
	}
	r, ok := s.raw.(Reclaimer)
	if !ok {
		return
	}
	if r.Reclaim([]byte{keys.Wait}, []byte{keys.Wait + 1}) == nil {
		s.unreclaimed = 0
	}
}
