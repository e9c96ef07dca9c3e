package peers

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"time"

	"github.com/minca-go/minca/transport"
)

// RoomOf is the relay room of a space (docs/sync.md §8): a hash of its id,
// so a relay does not learn which spaces its members sync.
func RoomOf(spaceID string) string {
	h := sha256.Sum256([]byte("minca/space-room/v1\x00" + spaceID))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

func (p *Peers) relayClient(url string) (*transport.RelayClient, error) {
	return transport.NewRelayClient(url, p.topt, &transport.RelayClientOptions{
		WebRTC: p.o.WebRTC,
		Redial: p.o.Redial,
		Logger: p.log,
		// The sessions run over direct connections; forwards are not
		// read, and a member flooding them is dropped, never waited for.
		ForwardQueue: -1,
		OnConn: func(ctx context.Context, room string, c *transport.Conn) {
			spaceID := p.spaceOfRoom(room)
			if spaceID == "" {
				c.CloseWith(CodeNotHeld, notHeld)
				return
			}
			// The end whose key sorts first opens (it offered, too), so
			// two introduced peers run one session, not two.
			if until := p.guard.refusedUntil(c.Peer().DID, "", time.Now()); !until.IsZero() {
				c.CloseWith(CodeForged, "this peer sent versions that fail the crypto gate; refused until "+until.UTC().Format(time.RFC3339))
				return
			}
			opener := p.topt.Self.DID() < c.Peer().DID
			cc := newConn(ctx, p, c, opener, true, "webrtc "+room)
			cc.only = []string{spaceID}
			if !p.track(cc, c) {
				return
			}
			defer p.untrack(cc)
			cc.run()
		},
	})
}

func (p *Peers) spaceOfRoom(room string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.roomSpace[room]
}

// joinRooms joins, with introductions, the room of every space held, and
// of spaces held later, until ctx is done.
func (p *Peers) joinRooms(ctx context.Context, rc *transport.RelayClient) {
	joined := map[string]bool{}
	for {
		if ids, err := p.host.Spaces(ctx); err == nil {
			for _, id := range ids {
				r := RoomOf(id)
				p.mu.Lock()
				p.roomSpace[r] = id
				p.mu.Unlock()
				if !joined[r] && rc.Join(ctx, r, true) == nil {
					joined[r] = true
				}
			}
		}
		t := time.NewTimer(p.o.Rescan)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
