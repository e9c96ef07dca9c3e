package negentropy

import "fmt"

// Client is the initiator of a reconciliation (§Preparation): it sends the
// first message and learns which ids it has that the server lacks (have) and
// which the server has that it lacks (need). A Client is not safe for
// concurrent use; the storage must not change during the session.
type Client struct {
	s         session
	initiated bool
}

// NewClient returns a client over storage. frameSizeLimit is the largest
// message it writes in bytes, 0 for no limit; limits under
// [MinFrameSizeLimit] are refused with [ErrFrameSizeLimit].
func NewClient(storage Storage, frameSizeLimit uint64) (*Client, error) {
	s, err := newSession(storage, frameSizeLimit)
	if err != nil {
		return nil, err
	}
	return &Client{s: s}, nil
}

// Initiate returns the first message: the version byte, then the whole
// range split as any other range, ending at infinity (§Message). It may be
// called once.
func (c *Client) Initiate() ([]byte, error) {
	if c.initiated {
		return nil, ErrInitiated
	}
	c.initiated = true
	var w writer
	out, err := c.s.splitRange(&w, []byte{ProtocolVersion}, 0, c.s.storage.Size(), InfiniteBound())
	if err != nil {
		return nil, fmt.Errorf("negentropy: initiate: %w", err)
	}
	return out, nil
}

// Round is what the client learns from one server message.
type Round struct {
	// Next is the message to send the server, nil once reconciliation is
	// complete.
	Next []byte
	// Have lists ids the client has in the ranges the server listed and the
	// server does not.
	Have []ID
	// Need lists ids the server listed that the client does not have.
	Need []ID
}

// Reconcile processes one server message (§Range). A message in another
// protocol version yields a [*VersionError]; a malformed one an error
// wrapping [ErrMalformed]. A session can be resumed by a new Client calling
// Reconcile without Initiate.
func (c *Client) Reconcile(msg []byte) (Round, error) {
	var r Round
	out, err := c.s.reconcile(msg, true, &r.Have, &r.Need)
	if err != nil {
		return Round{}, err
	}
	if len(out) > 1 {
		r.Next = out
	}
	return r, nil
}
