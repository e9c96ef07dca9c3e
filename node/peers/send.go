package peers

import (
	"errors"
	"fmt"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/record"
)

// write sends the session's messages until it ends, an opener's from
// its NEG-OPEN on: small messages first, then answers to the peer's
// WANTs, then pushes and our own WANTs within the credit the wire allows
// (MaxPushesOut, MaxWantsOut).
func (s *session) write() {
	// An opener's first message is its NEG-OPEN (queueOpen).
	select {
	case <-s.opened:
	case <-s.ctx.Done():
		return
	}
	checked := time.Now()
	for {
		msg, job, push, want, flag := s.next()
		if (job != nil || push != nil) && time.Since(checked) >= s.c.p.recheck {
			// A member removed, a key revoked: what it may read is asked
			// again before more is sent.
			checked = time.Now()
			if ok, err := s.c.host.MayRead(s.ctx, s.space, s.c.peer); err == nil && !ok {
				s.finish(ended(CodeNotHeld, notHeld))
				return
			}
		}
		var err error
		switch {
		case msg != nil:
			err = s.c.send(s.ctx, s, msg)
			s.sentCtrl(msg)
		case job != nil:
			err = s.answer(job)
		case push != nil:
			err = s.push(push)
		case want != nil:
			err = s.sendHeld(encodeWant(s.sid, flag, want))
		default:
			select {
			case <-s.ctx.Done():
				return
			case <-s.kick:
			}
			continue
		}
		if err != nil {
			if s.ctx.Err() == nil {
				s.finish(ended(CodeInternal, "sending: %v", err))
			}
			return
		}
	}
}

// next takes the next thing to send off the queues.
func (s *session) next() (msg []byte, job *wantJob, push, want []canonical.ID, flag byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Each slot taken is cleared: a sent answer must not stay reachable
	// from the queue's array for the session's life.
	if len(s.ctrl) > 0 {
		msg = s.ctrl[0]
		s.ctrl[0] = nil
		s.ctrl = s.ctrl[1:]
		return
	}
	if len(s.serve) > 0 {
		j := s.serve[0]
		s.serve[0] = wantJob{}
		s.serve = s.serve[1:]
		return nil, &j, nil, nil, 0
	}
	if s.pushOut < MaxPushesOut && len(s.pushQ) > 0 {
		n := min(len(s.pushQ), MaxBatch)
		push = s.pushQ[:n:n]
		s.pushQ = s.pushQ[n:]
		s.pushOut++
		return
	}
	if s.wantsOut < MaxWantsOut {
		for _, q := range []*[]canonical.ID{&s.wantQ, &s.bodyQ} {
			var ids []canonical.ID
			for len(*q) > 0 && len(ids) < MaxWantIDs {
				d := (*q)[0]
				*q = (*q)[1:]
				if s.c.host.Store().Refused(s.c.peer.DID, d) {
					continue // refused from this peer: not asked again (02 §9.5)
				}
				ids = append(ids, d)
			}
			if len(ids) > 0 {
				s.wantsOut++
				flag = wantKept
				if q == &s.bodyQ {
					flag = wantBodies
				}
				return nil, nil, nil, ids, flag
			}
		}
		s.checkSettled()
	}
	return
}

// frameRoom takes room in the connection's SendQueue for one frame the
// writer is about to build, waiting while the connection holds its share:
// a peer that does not read is not answered further.
func (s *session) frameRoom() (int, error) {
	n := min(s.c.c.MaxMessage(), int(s.c.out.cap))
	if err := s.c.out.take(s.ctx, n, negReserve); err != nil {
		return 0, err
	}
	return n, nil
}

// sendHeld sends msg within the connection's SendQueue.
func (s *session) sendHeld(msg []byte) error {
	if err := s.c.out.take(s.ctx, len(msg), negReserve); err != nil {
		return err
	}
	defer s.c.out.give(len(msg))
	return s.c.send(s.ctx, s, msg)
}

// answer sends the versions a WANT asks for that are held, as held (02
// §4.5: stubs as stubs; for wantBodies only whole ones), in as many
// VERSIONS as they need, the last flagged last.
func (s *session) answer(j *wantJob) error {
	room, err := s.frameRoom()
	if err != nil {
		return err
	}
	defer func() { s.c.out.give(room) }()
	vb := newVersionsBuilder(s.sid, s.c.c.MaxMessage())
	defer vb.release()
	vb.large()
	sent := 0
	// The versions asked are looked up in one sorted pass and read in
	// the order the store keeps them, answerBytes at a time: for a peer
	// catching up, near-sequential reads rather than a point read each.
	// Those this session listed are read where the sync order said they
	// are, the rest looked up by id.
	at := make([]uint64, len(j.ids))
	s.listed.Places(len(j.ids), func(i int) negentropy.ID { return negentropy.ID(j.ids[i]) }, at)
	err = s.c.host.Store().VersionsStoredAt(s.ctx, j.ids, at, answerBytes, func(i int, raw []byte) error {
		// One this session listed is of its scope (its sync order is
		// the scope's alone): only the others are read for theirs.
		if at[i] == 0 || j.flag == wantBodies {
			var ok bool
			var err error
			if raw, ok, err = s.sendable(raw, j.flag == wantBodies); err != nil || !ok {
				return err
			}
		}
		if !vb.alone(len(raw)) {
			return nil
		}
		if !vb.fits(len(raw)) {
			err := s.c.sendFrame(s.ctx, s, vb.frame(versAnswer))
			vb.reset()
			s.c.out.give(room)
			room = 0
			if err != nil {
				return err
			}
			if room, err = s.frameRoom(); err != nil {
				return err
			}
		}
		vb.add(raw)
		sent++
		return nil
	})
	if err != nil {
		return err
	}
	s.count(sent)
	return s.c.sendFrame(s.ctx, s, vb.frame(versLast))
}

// listedBytes bounds what a connection's sessions remember of where the
// ids they listed are held (48 bytes an id): about 109,000 ids, so that
// the WANTs after a reconciliation of a space that size read no id
// entries; past it the rest are looked up by id. Each is forgotten once
// asked for, and all of a session's when it ends.
const listedBytes = 5 << 20

// answerBytes bounds the versions an answer holds read from the store
// and not yet sent (past one version): enough to share a read's fixed
// cost, small next to the connection's SendQueue.
const answerBytes = 256 << 10

// push sends held versions unasked; the peer answers with ADMITTED.
func (s *session) push(ids []canonical.ID) error {
	room, err := s.frameRoom()
	if err != nil {
		return err
	}
	defer s.c.out.give(room)
	vb := newVersionsBuilder(s.sid, s.c.c.MaxMessage())
	defer vb.release()
	sent := 0
	for _, d := range ids {
		raw, ok, err := s.kept(d, false)
		if err != nil {
			return err
		}
		if !ok || !vb.alone(len(raw)) {
			continue
		}
		if !vb.fits(len(raw)) {
			// The rest goes back to the front of the queue for the next
			// push, within the credit.
			s.mu.Lock()
			rest := ids[indexOf(ids, d):]
			s.pushQ = append(append([]canonical.ID(nil), rest...), s.pushQ...)
			s.mu.Unlock()
			break
		}
		vb.add(raw)
		sent++
	}
	s.count(sent)
	if sent == 0 {
		s.mu.Lock()
		s.pushOut--
		s.checkSettled()
		s.mu.Unlock()
		s.wake()
		return nil
	}
	return s.c.sendFrame(s.ctx, s, vb.frame(versPush))
}

func indexOf(ids []canonical.ID, d canonical.ID) int {
	for i := range ids {
		if ids[i] == d {
			return i
		}
	}
	return len(ids)
}

func (s *session) count(n int) {
	s.mu.Lock()
	s.stats.Sent += int64(n)
	s.mu.Unlock()
}

// kept reads a held version in the session's scope, as held; wholeOnly
// skips a stub. ok is false for what is not held or not to be sent.
func (s *session) kept(d canonical.ID, wholeOnly bool) ([]byte, bool, error) {
	st := s.c.host.Store()
	raw, err := st.VersionJSON(s.ctx, d)
	if errors.Is(err, engine.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return s.sendable(raw, wholeOnly)
}

// sendable returns raw, a held version, when it is one of the session's
// scope; wholeOnly skips a stub.
func (s *session) sendable(raw []byte, wholeOnly bool) ([]byte, bool, error) {
	// Read always: an id of another space, one the peer may not read, is
	// never sent.
	sp, coll, ok := members(raw, "space", "collection")
	if !ok {
		return nil, false, fmt.Errorf("minca/peers: a stored version does not read as JSON: %.80s", raw)
	}
	if sp != s.space || !s.inScope(coll) {
		return nil, false, nil
	}
	if wholeOnly {
		v, err := record.Decode(raw)
		if err != nil || v.IsStub() {
			return nil, false, err
		}
	}
	return raw, true, nil
}
