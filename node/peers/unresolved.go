package peers

import (
	"errors"
	"github.com/minca-go/minca/canonical"

	"github.com/minca-go/minca/engine"
)

// A session's versions that wait (02 §9.5) and never come to stand: a peer
// sending versions whose prev or genesis no one holds (docs/sync.md §7.3).
const (
	// MaxUnresolved is how many of the versions a session received may
	// still wait, once looked at again, before it ends with sync/useless
	// (when more than 4× the versions it brought that were stored).
	MaxUnresolved = 1024
	// MaxUnresolvedBytes is the same bound in bytes, as the versions
	// travelled: a peer's largest frames fill it in eight versions.
	MaxUnresolvedBytes = 8 << 20
)

// later is a version the session received that waits.
type later struct {
	id   canonical.ID
	size int
}

// waits notes a version received that waits.
func (s *session) waits(id canonical.ID, size int) {
	s.unresolved = append(s.unresolved, later{id, size})
	s.unresolvedBytes += int64(size)
}

// checkUnresolved looks again, once the versions received that wait reach
// a bound, at which have come to stand since (what they waited for came
// later in the session); those that still wait, past a bound and more
// than 4× what the session stored, end it with sync/useless. Looked at
// again each time what still waits has doubled (or reached a bound), so a
// session reads about twice the versions it received that wait.
func (s *session) checkUnresolved(received int64) *endError {
	if len(s.unresolved) < max(s.recheckAt, MaxUnresolved/4) && s.unresolvedBytes < max(s.recheckBytes, MaxUnresolvedBytes/4) {
		return nil
	}
	st := s.c.host.Store()
	kept := s.unresolved[:0]
	var bytes int64
	for _, l := range s.unresolved {
		_, _, err := st.Standing(s.ctx, l.id)
		switch {
		case err == nil:
			s.resolved++
			continue
		case !errors.Is(err, engine.ErrNotFound):
			return ended(CodeInternal, "reading the store: %v", err)
		}
		kept = append(kept, l)
		bytes += int64(l.size)
	}
	clear(s.unresolved[len(kept):])
	s.unresolved, s.unresolvedBytes = kept, bytes
	s.recheckAt, s.recheckBytes = 2*len(kept), 2*bytes
	if len(kept) <= MaxUnresolved {
		s.recheckAt = min(s.recheckAt, MaxUnresolved+1)
	}
	if bytes <= MaxUnresolvedBytes {
		s.recheckBytes = min(s.recheckBytes, MaxUnresolvedBytes+1)
	}
	if (len(kept) > MaxUnresolved || bytes > MaxUnresolvedBytes) && int64(len(kept)) > 4*(received+s.resolved) {
		return ended(CodeUseless, "%d versions (%d bytes) that wait for what no one sent, %d taken in", len(kept), bytes, received+s.resolved)
	}
	return nil
}
