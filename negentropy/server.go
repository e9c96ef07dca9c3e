package negentropy

import "fmt"

// Server answers a client's messages (§Preparation). It learns nothing
// itself: the client computes have and need. A Server is not safe for
// concurrent use; the storage must not change during the session.
type Server struct {
	s session
}

// NewServer returns a server over storage. frameSizeLimit is the largest
// message it writes in bytes, 0 for no limit; limits under
// [MinFrameSizeLimit] are refused with [ErrFrameSizeLimit].
func NewServer(storage Storage, frameSizeLimit uint64) (*Server, error) {
	s, err := newSession(storage, frameSizeLimit)
	if err != nil {
		return nil, err
	}
	return &Server{s: s}, nil
}

// Reconcile answers one client message (§Message, §Range). A message in
// another protocol version from 0x60 to 0x6f is answered with the single
// byte 0x61, the version the server speaks; a malformed message yields an
// error wrapping [ErrMalformed].
func (s *Server) Reconcile(msg []byte) ([]byte, error) {
	return s.s.reconcile(msg, false, nil, nil)
}

// SetFrameSizeLimit changes the largest message the server writes from
// its next answer on (0: none; under [MinFrameSizeLimit] is refused): a
// server short of room to send answers in smaller messages, and the
// client goes on in more rounds.
func (s *Server) SetFrameSizeLimit(frameSizeLimit uint64) error {
	if frameSizeLimit != 0 && frameSizeLimit < MinFrameSizeLimit {
		return fmt.Errorf("%w: %d", ErrFrameSizeLimit, frameSizeLimit)
	}
	s.s.frameSizeLimit = frameSizeLimit
	return nil
}
