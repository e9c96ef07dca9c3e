package peers

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/transport"
)

// received admits a VERSIONS message: an answer to our WANT, or a push.
// It goes to the session's admission pipeline (engine.Pipeline): its
// versions are decoded and checked, and its batch decided, while the batch
// before it commits; what follows from a batch — ADMITTED, the answer
// counted, bodies and gaps asked for — waits for its commit (admitted).
func (s *session) received(m *message) *endError {
	s.mu.Lock()
	if m.flag == versPush {
		if s.pushIn >= MaxPushesOut {
			s.mu.Unlock()
			return ended(CodePushFlood, "a push with %d unacknowledged; at most %d", s.pushIn, MaxPushesOut)
		}
		s.pushIn++
	} else if s.wantsOut == 0 {
		s.mu.Unlock()
		return ended(CodeUnexpected, "VERSIONS answering no WANT")
	} else if m.flag == versLast {
		// The answer is whole: the next WANT may go while this commits.
		s.wantsOut--
	}
	s.committing++
	s.mu.Unlock()
	s.wake()
	// A message whose versions name many files is admitted in parts
	// (admissionWeight), in order; the last holds the message's frame and
	// its bytes of the RecvQueue, and acts for the whole message.
	parts := splitAdmission(m.versions)
	whole := &admitted{}
	for i, raws := range parts {
		ad := &admission{flag: m.flag, raws: raws, whole: whole, last: i == len(parts)-1}
		if ad.last {
			ad.frame, ad.size = m.frame, m.size
		}
		// Not the session's context: a batch read whole is admitted though
		// the session ends while it waits for its turn (newAdmit).
		// A part not added ends the session; the message's bytes go back
		// with it (the last part, which holds them, was not added).
		if err := s.admit.Add(context.WithoutCancel(s.ctx), ad); err != nil {
			return s.admitErr(err)
		}
	}
	m.size = 0 // the pipeline gives it back once the batch is decided (newAdmit)
	return nil
}

// admissionWeight bounds what one admission batch weighs: its versions'
// bytes as they travelled and fileWeight for each file they name (what
// a file named costs the batch: its two files-index entries, in the
// store's write batch and in the batch's own view of its writes, and its
// entry decoded). A message of up to 1 MiB of versions naming none is
// one batch, as it always was; one of versions naming 64 files each
// (190 of them, 12,000 files) weighs 3.4 MiB and is admitted in four, so
// the three batches the pipeline holds at once (decoded, deciding,
// committing) cost what three messages of versions naming none do, not
// four times that.
const (
	admissionWeight = 1 << 20
	fileWeight      = 200
)

// fileEntry begins each entry of a version's files as canonical JSON
// (02 §3.1: {hash, size}, members in order): counted, not parsed, to
// weigh a version before it is decoded. A body holding the same text
// only makes its batch smaller.
var fileEntry = []byte(`{"hash":"`)

// splitAdmission cuts a message's versions into runs, in order, each of
// at most admissionWeight (a version weighing more alone).
func splitAdmission(raws [][]byte) [][][]byte {
	var parts [][][]byte
	start, w := 0, 0
	for i, raw := range raws {
		vw := len(raw) + fileWeight*bytes.Count(raw, fileEntry)
		if i > start && w+vw > admissionWeight {
			parts = append(parts, raws[start:i])
			start, w = i, 0
		}
		w += vw
	}
	return append(parts, raws[start:])
}

// admission is a VERSIONS message, or a part of one (splitAdmission), on
// its way through the pipeline.
type admission struct {
	flag  byte
	raws  [][]byte
	frame transport.Frame // the buffer raws lie in, released once they are decoded (the last part's)
	size  int             // the message's bytes of the connection's RecvQueue (the last part's)
	// whole counts the message's versions over its parts; last is its
	// last part, which acts for it (ADMITTED, the answer counted).
	whole *admitted
	last  bool
	a     admitted
	vs    []*record.Version
	sizes []int // each version's bytes as it travelled
}

// newAdmit starts the session's admission pipeline. A message's bytes
// count in the connection's RecvQueue until its batch is decided, as they
// did while it was decided in the reading goroutine: what the peer sent
// and is not yet decided is bounded there, and the two batches decided
// and committing are bounded by the pipeline. It runs on whatever the
// session does: a batch that arrived whole is checked, decided and
// committed though the session or its connection ends meanwhile (the
// session's end waits for it), as the peer may count it delivered.
//
// Its batches fill the session's space (engine.Filling): into a space the
// store held nothing of (a node's first sync of it), while nothing else
// writes to the store, they look up only the keys their own batches
// wrote, not the ids, heads and line places every new version would
// find missing.
func (s *session) newAdmit() *engine.Pipeline[*admission] {
	return engine.NewPipeline(context.WithoutCancel(s.ctx), s.c.host.Store(), s.c.peer.DID, engine.Stages[*admission]{
		Fill:     engine.NewFilling(s.space),
		Versions: s.decode,
		Decided:  func(ad *admission) { s.c.in.give(ad.size) },
		Done:     s.admitted,
	})
}

// flush waits until every VERSIONS received is admitted and acted on.
func (s *session) flush() *endError {
	if err := s.admit.Flush(); err != nil {
		return s.admitErr(err)
	}
	return nil
}

// admitErr is why admitting ended the session.
func (s *session) admitErr(err error) *endError {
	var e *endError
	switch {
	case errors.As(err, &e):
		return e
	case s.ctx.Err() != nil:
		return ended(CodeClosed, "closed while admitting")
	}
	return ended(CodeInternal, "admitting: %v", err)
}

// decode decodes a VERSIONS message's versions and leaves out what is held
// or outside the scope: the rest go to the judge (02 §9).
func (s *session) decode(ctx context.Context, ad *admission) ([]*record.Version, error) {
	st := s.c.host.Store()
	ad.vs = make([]*record.Version, 0, len(ad.raws))
	decoded, errs := decodeAll(ad.raws)
	for i, raw := range ad.raws {
		v, err := decoded[i], errs[i]
		if err != nil {
			ad.a.Refused++ // unreadable: nothing to remember it by
			continue
		}
		if !v.HasSpace || v.Space != s.space || !s.inScope(v.Collection) {
			ad.a.Held++
			continue
		}
		// A push may bring what is held (a flood of it ends the session);
		// an answer brings what this end asked for, not held when asked,
		// and the store changes nothing for a copy it holds.
		if ad.flag == versPush {
			d, _ := v.Digest() // zero, never held, for an id that is not exact
			if _, stored, err := st.Standing(ctx, d); err == nil && (stored == engine.Whole || v.IsStub()) {
				ad.a.Held++
				s.remember(v)
				continue
			}
		}
		ad.vs, ad.sizes = append(ad.vs, v), append(ad.sizes, len(raw))
	}
	// Nothing decoded points into the frame (record.Decode copies what
	// it keeps): its buffer is read into again, while the message's
	// bytes still count in RecvQueue until the batch is decided.
	ad.raws = nil
	ad.frame.Release()
	ad.frame = transport.Frame{}
	return ad.vs, nil
}

// admitted acts on a batch once it is committed, one batch at a time (the
// pipeline's Done): counts it, asks for the bodies of current stubs and
// for the holes in writers' lines, acknowledges a push. An error ends the
// session (and stops the pipeline).
func (s *session) admitted(ad *admission, r engine.Result) error {
	if e := s.settle(ad, r); e != nil {
		s.finish(e)
		return e
	}
	return nil
}

func (s *session) settle(ad *admission, r engine.Result) *endError {
	a := ad.a
	var bodies, gaps []canonical.ID
	forgeries := 0
	if len(ad.vs) > 0 {
		if r.Err != nil {
			return s.admitErr(r.Err)
		}
		for i, o := range r.Outcomes {
			switch o.Verdict {
			case engine.Stands, engine.Withdrawn:
				a.Stored++
				s.remember(ad.vs[i])
				if d, ok := s.gap(ad.vs[i], o); ok {
					gaps = append(gaps, d)
				}
				if o.Stored == engine.Stub && o.Top {
					// A current stub: its body is asked for separately (02 §4.5).
					if d, ok := ad.vs[i].Digest(); ok {
						bodies = append(bodies, d)
					}
				}
			case engine.Later:
				a.Later++
				s.remember(ad.vs[i])
				d, _ := ad.vs[i].Digest() // a version that waits passed Check: its id is exact
				s.waits(d, ad.sizes[i])
			default:
				a.Refused++
				if forged(o.Refusal) {
					forgeries++
				}
			}
		}
		s.mu.Lock()
		received := s.stats.Received + int64(a.Stored)
		s.mu.Unlock()
		if e := s.checkUnresolved(received); e != nil {
			return e
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ad.whole.Stored += a.Stored
	ad.whole.Later += a.Later
	ad.whole.Refused += a.Refused
	ad.whole.Held += a.Held
	st := &s.stats
	st.Received += int64(a.Stored)
	st.Later += int64(a.Later)
	st.Refused += int64(a.Refused)
	st.Held += int64(a.Held)
	if until := s.c.p.guard.forgeries(s.c.peer.DID, s.c.addr, forgeries, time.Now()); !until.IsZero() {
		s.c.p.forged(s.c.peer.DID, s.c.addr, until)
		return ended(CodeForged, "versions failing the crypto gate")
	}
	for _, d := range bodies {
		if len(s.bodyQ) < maxBodyQueue {
			s.bodyQ = append(s.bodyQ, d)
		}
	}
	for _, d := range gaps {
		if len(s.wantQ) < maxDiff {
			s.wantQ = append(s.wantQ, d)
		}
	}
	if ad.last {
		s.committing--
		if ad.flag == versPush {
			s.pushIn--
			s.queueLocked(encodeAdmitted(s.sid, *ad.whole))
		}
	}
	if st.Refused > maxRefused && st.Refused > st.Received {
		return ended(CodeRefused, "%d versions refused, %d taken in", st.Refused, st.Received)
	}
	if st.Held > maxUseless && st.Held > 4*st.Received {
		return ended(CodeUseless, "%d versions that brought nothing, %d taken in", st.Held, st.Received)
	}
	s.checkSettled()
	s.wake()
	return nil
}

// gap is the version before v in its writer's line (02 §4.10) when the
// store does not hold it (Outcome.Gap): a version this end lacks in the
// collection, to ask for, unless this peer's copy was refused. Only a
// partial hold walks the lines: a whole space's reconciliation finds
// everything the peer holds by itself.
func (s *session) gap(v *record.Version, o engine.Outcome) (canonical.ID, bool) {
	prev, _ := v.LogPrevDigest()
	if !o.Gap || len(s.scope.Collections) == 0 || s.c.host.Store().Refused(s.c.peer.DID, prev) {
		return canonical.ID{}, false
	}
	return v.LogPrevDigest()
}

// forged reports whether a refusal is one no honest peer causes: the
// crypto gate's (02 §3.3: id, author, signature) or a body that does not
// hash to its bodyHash.
func forged(r *record.Refusal) bool {
	return r != nil && (r.Step() == "crypto" || r.Code == record.CodeBody)
}

// decodeAll decodes versions on every core.
func decodeAll(raws [][]byte) ([]*record.Version, []error) {
	vs, errs := make([]*record.Version, len(raws)), make([]error, len(raws))
	n := min(runtime.GOMAXPROCS(0), (len(raws)+63)/64)
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(raws); i += n {
				vs[i], errs[i] = record.Decode(raws[i])
			}
		}()
	}
	wg.Wait()
	return vs, errs
}
