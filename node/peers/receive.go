package peers

import (
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// received admits a VERSIONS message: an answer to our WANT, or a push.
// Its checks run, and its batch is decided, while the batch before it
// commits (engine.Submit); what follows from a batch — ADMITTED, the
// answer counted, bodies and gaps asked for — waits for its commit.
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
	next, e := s.submit(m)
	if e != nil {
		return e
	}
	if e := s.settle(); e != nil {
		return e
	}
	s.pending = next
	if m.flag == versPush {
		// Acknowledged only once durable: no waiting for the next batch.
		return s.settle()
	}
	return nil
}

// admission is a batch submitted and committing.
type admission struct {
	flag  byte
	a     admitted
	vs    []*record.Version
	sizes []int         // each version's bytes as it travelled
	done  chan struct{} // closed once committed (or failed)
	outs  []engine.Outcome
	err   error
}

// submit decodes a VERSIONS message's versions, leaves out what is held or
// outside the scope, and submits the rest to the judge (02 §9).
func (s *session) submit(m *message) (*admission, *endError) {
	ad := &admission{flag: m.flag}
	st := s.c.host.Store()
	ad.vs = make([]*record.Version, 0, len(m.versions))
	decoded, errs := decodeAll(m.versions)
	for i := range m.versions {
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
		if m.flag != versPush {
			ad.vs, ad.sizes = append(ad.vs, v), append(ad.sizes, len(m.versions[i]))
			continue
		}
		if _, stored, err := st.Standing(s.ctx, v.ID); err == nil && (stored == engine.Whole || v.IsStub()) {
			ad.a.Held++
			s.remember(v.ID)
			continue
		}
		ad.vs, ad.sizes = append(ad.vs, v), append(ad.sizes, len(m.versions[i]))
	}
	ad.done = make(chan struct{})
	if len(ad.vs) == 0 {
		close(ad.done)
		return ad, nil
	}
	p, err := st.Prepare(s.ctx, ad.vs)
	var adm *engine.Admission
	if err == nil {
		adm, err = st.Submit(s.ctx, s.c.peer.DID, p)
	}
	if err != nil {
		if s.ctx.Err() != nil {
			return nil, ended(CodeClosed, "closed while admitting")
		}
		return nil, ended(CodeInternal, "admitting: %v", err)
	}
	go func() {
		ad.outs, ad.err = adm.Wait()
		close(ad.done)
	}()
	return ad, nil
}

// settle waits for the batch committing, if any, and acts on its
// outcomes.
func (s *session) settle() *endError {
	ad := s.pending
	if ad == nil {
		return nil
	}
	s.pending = nil
	a := ad.a
	var bodies, gaps []canonical.ID
	forgeries := 0
	<-ad.done
	if outs, err := ad.outs, ad.err; len(ad.vs) > 0 {
		if err != nil {
			if s.ctx.Err() != nil {
				return ended(CodeClosed, "closed while admitting")
			}
			return ended(CodeInternal, "admitting: %v", err)
		}
		// A stub another version of the batch supersedes is not current:
		// no need to read its record to know.
		top := map[string]int64{}
		for _, v := range ad.vs {
			if sq, ok := top[v.Key]; !ok || v.Seq > sq {
				top[v.Key] = v.Seq
			}
		}
		for i, o := range outs {
			switch o.Verdict {
			case engine.Stands, engine.Withdrawn:
				a.Stored++
				s.remember(o.ID)
				if len(s.scope.Collections) > 0 {
					if d, ok := s.gap(ad.vs[i]); ok {
						gaps = append(gaps, d)
					}
				}
				if o.Stored == engine.Stub && top[ad.vs[i].Key] == ad.vs[i].Seq && s.currentStub(ad.vs[i]) {
					if d, err := canonical.ParseID(o.ID); err == nil {
						bodies = append(bodies, d)
					}
				}
			case engine.Later:
				a.Later++
				s.remember(o.ID)
				s.waits(o.ID, ad.sizes[i])
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
	s.committing--
	if ad.flag == versPush {
		s.pushIn--
		s.queueLocked(encodeAdmitted(s.sid, a))
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

// gap is the version before v in its writer's line (02 §4.10) when it is
// not held: a version this end lacks in the collection, to ask for. Only a
// partial hold walks the lines: a whole space's reconciliation finds
// everything the peer holds by itself.
func (s *session) gap(v *record.Version) (canonical.ID, bool) {
	if v.Log == nil || v.Log.N == 0 || v.Log.Prev == "" {
		return canonical.ID{}, false
	}
	st := s.c.host.Store()
	if _, _, err := st.Standing(s.ctx, v.Log.Prev); !errors.Is(err, engine.ErrNotFound) {
		return canonical.ID{}, false
	}
	if st.Refused(s.c.peer.DID, v.Log.Prev) {
		return canonical.ID{}, false
	}
	d, err := canonical.ParseID(v.Log.Prev)
	return d, err == nil
}

// currentStub reports whether v, stored as a stub, is its record's
// current version: its body is asked for separately (02 §4.5).
func (s *session) currentStub(v *record.Version) bool {
	hs, err := s.c.host.Store().History(s.ctx, v.Space, v.Key)
	return err == nil && len(hs) > 0 && hs[0].Version.ID == v.ID && hs[0].Stored == engine.Stub
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
