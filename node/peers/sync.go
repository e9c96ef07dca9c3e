package peers

import (
	"context"
	"errors"
	"slices"

	"github.com/minca-go/minca/transport"
)

// SpaceResult is how one space's reconciliation ended.
type SpaceResult struct {
	Space string `json:"space"`
	// Code is sync/done when it finished; otherwise why it did not
	// (sync/not-held: the peer does not hold it, or this end may not read
	// it there).
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
	Stats
}

// Summary is what one reconciliation did (minca sync).
type Summary struct {
	Peer    string        `json:"peer"`
	Account string        `json:"account,omitempty"`
	Spaces  []SpaceResult `json:"spaces"`
	Stats
	// WireSent and WireReceived are the connection's own frame bytes,
	// the who exchange's excepted.
	WireSent     int64 `json:"wireSent"`
	WireReceived int64 `json:"wireReceived"`
}

// ErrNoSpaces: Sync was given no space both ends may read.
var ErrNoSpaces = errors.New("minca/peers: no space to sync")

// Sync runs one reconciliation of each space (all the host holds that
// the peer may read, when spaces is empty) over c as the opener, with no
// live push, and returns when each has finished or failed. c stays open.
func (p *Peers) Sync(ctx context.Context, c *transport.Conn, spaces []string) (Summary, error) {
	sum := Summary{Peer: c.Peer().DID, Account: c.Peer().Root, Spaces: []SpaceResult{}}
	if len(spaces) == 0 {
		ids, err := p.host.Spaces(ctx)
		if err != nil {
			return sum, err
		}
		spaces = ids
	}
	cc := newConn(ctx, p, c, true, false, "sync")
	before := c.Stats()
	go cc.run()
	var open []*session
	for _, id := range slices.Compact(slices.Sorted(slices.Values(spaces))) {
		ok, err := p.host.MayRead(ctx, id, cc.peer)
		if err != nil {
			return sum, err
		}
		if !ok {
			sum.Spaces = append(sum.Spaces, SpaceResult{Space: id, Code: CodeNotHeld, Message: "not held here, or not the peer's to read"})
			continue
		}
		open = append(open, cc.open(id))
	}
	for _, s := range open {
		for {
			select {
			case <-s.done:
			case <-ctx.Done():
				cc.cancel()
				return sum, ctx.Err()
			}
			e := s.Err()
			if e == nil || e.code != CodeScope || !e.remote || cc.narrowed(s.space) {
				break
			}
			cc.scoped(s.space, e.msg)
			s = cc.open(s.space)
		}
		st := s.status()
		r := SpaceResult{Space: s.space, Code: st.Ended, Stats: st.Stats}
		if e := s.Err(); e != nil {
			r.Message = e.msg
		}
		sum.Spaces = append(sum.Spaces, r)
		sum.Stats.add(st.Stats)
	}
	cc.cancel()
	after := c.Stats()
	sum.WireSent, sum.WireReceived = after.BytesSent-before.BytesSent, after.BytesReceived-before.BytesReceived
	if len(open) == 0 {
		return sum, ErrNoSpaces
	}
	return sum, nil
}
