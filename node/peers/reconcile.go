package peers

import (
	"errors"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/negentropy/enginestore"
)

// negLimit is the frame size limit negentropy's messages keep to.
func (s *session) negLimit() uint64 {
	return uint64(max(4096, min(s.c.c.MaxMessage()-256, 1<<20)))
}

func (s *session) build() (*enginestore.Store, *endError) {
	st, err := s.feed.index(s.ctx, s.c.host.Store(), s.scope, &s.c.p.feeds.builds)
	if err != nil {
		return nil, ended(CodeInternal, "reading the sync order: %v", err)
	}
	return st, nil
}

func (s *session) openNeg() *endError {
	st, e := s.build()
	if e != nil {
		return e
	}
	cl, err := negentropy.NewClient(st, s.negLimit())
	if err != nil {
		return ended(CodeInternal, "negentropy: %v", err)
	}
	first, err := cl.Initiate()
	if err != nil {
		return s.negErr(err)
	}
	p := &openParams{Space: s.space, Collections: s.c.collections(s.space), Live: s.live}
	s.mu.Lock()
	s.neg, s.phase = cl, PhaseReconciling
	s.stats.NegBytes += int64(len(first))
	s.mu.Unlock()
	if h := s.c.p.beforeNegOpen; h != nil {
		h(s.space)
	}
	s.queueOpen(encodeNegOpen(s.sid, p, first))
	return nil
}

func (s *session) negErr(err error) *endError {
	switch {
	case errors.Is(err, enginestore.ErrChanged):
		return ended(CodeChanged, "the sync order changed during the reconciliation")
	case errors.Is(err, negentropy.ErrMalformed):
		return ended(CodeNegMalformed, "%v", err)
	default:
		var ve *negentropy.VersionError
		if errors.As(err, &ve) {
			return ended(CodeNegMalformed, "%v", err)
		}
		return ended(CodeInternal, "negentropy: %v", err)
	}
}

func (s *session) serverRound(q []byte) *endError {
	s.mu.Lock()
	s.stats.Rounds++
	rounds := s.stats.Rounds
	s.stats.NegBytes += int64(len(q))
	s.mu.Unlock()
	if rounds > maxRounds {
		return ended(CodeNegTooLong, "more than %d negentropy rounds", maxRounds)
	}
	if rounds > 1 {
		// Past the first answer (small: answerLimit), where the ids
		// listed are held is kept for the WANTs that follow (send.go).
		s.listed.Keep()
	}
	// The answer fits what the connection has room to send: short of
	// room, smaller answers and more rounds, never more held. And it
	// fits the session's own allowance, which starts small and grows
	// each round (answerLimit).
	s.answerCap = answerLimit(s.answerCap, int(s.negLimit()))
	lim := uint64(min(max(s.c.out.room(), negentropy.MinFrameSizeLimit), s.answerCap))
	if err := s.negSrv.SetFrameSizeLimit(lim); err != nil {
		return ended(CodeInternal, "negentropy: %v", err)
	}
	out, err := s.negSrv.Reconcile(q)
	if err != nil {
		return s.negErr(err)
	}
	s.mu.Lock()
	s.stats.NegBytes += int64(len(out))
	s.mu.Unlock()
	s.post(encodeNegMsg(s.sid, out))
	return nil
}

// firstAnswer is the most a responder's first negentropy answer holds;
// each answer after may hold four times the one before, up to the frame
// limit. A NEG-OPEN from an empty set is answered with ids, as many as
// fit: so a peer that opens sessions and drops them, or holds many open,
// gets a small answer for each, while a reconciliation that goes on
// reaches full answers by its third round: a reconciliation of two large
// sets, whose first two answers are fingerprints, never waits on it
// (docs/sync.md §7.3).
const firstAnswer = 64 << 10

// answerLimit is the allowance of the answer after one allowed last
// (0 before the first), within the frame limit.
func answerLimit(last, frame int) int {
	if last == 0 {
		return min(firstAnswer, frame)
	}
	return min(4*last, frame)
}

func (s *session) clientRound(q []byte) *endError {
	if s.neg == nil || s.negDone {
		return ended(CodeUnexpected, "NEG-MSG with no reconciliation open")
	}
	r, err := s.neg.Reconcile(q)
	if err != nil {
		return s.negErr(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Rounds++
	s.stats.NegBytes += int64(len(q) + len(r.Next))
	if s.stats.Rounds > maxRounds {
		return ended(CodeNegTooLong, "more than %d negentropy rounds", maxRounds)
	}
	for _, id := range r.Have {
		s.pushQ = append(s.pushQ, canonical.ID(id))
	}
	for _, id := range r.Need {
		s.wantQ = append(s.wantQ, canonical.ID(id))
	}
	if len(s.pushQ) > maxDiff || len(s.wantQ) > maxDiff {
		return ended(CodeNegTooLong, "more than %d differences", maxDiff)
	}
	if r.Next == nil {
		s.negDone, s.neg = true, nil
		s.queueLocked(encodeNegClose(s.sid))
		s.checkSettled()
	} else {
		s.queueLocked(encodeNegMsg(s.sid, r.Next))
	}
	s.wake()
	return nil
}

// checkSettled closes settled once the opener's reconciliation has found
// its differences and nothing is left in flight. s.mu is held.
func (s *session) checkSettled() {
	if !s.opener || !s.negDone || s.settledOK {
		return
	}
	if len(s.wantQ) == 0 && len(s.bodyQ) == 0 && s.wantsOut == 0 && len(s.pushQ) == 0 && s.pushOut == 0 && s.committing == 0 {
		s.settledOK = true
		s.phase = PhaseLive
		close(s.settled)
	}
}
