package node

import (
	"strings"
	"time"
)

// keyDelay gathers the key records a sync brings in a burst before the
// node acts on them.
const keyDelay = 100 * time.Millisecond

// keyLoop follows what arrives in private spaces, by sync or otherwise
// (docs/private-spaces.md §7, §14): a member's key or a new member (its
// sys.memberkey, sys.assign) has the node box the current keys it holds
// to whoever lacks a box (BoxMissing); a box or a key change has it take
// the keys they bring, so records that arrived sealed open and are
// indexed opened without waiting for a read. A node holding no key of a
// space does neither.
func (n *Node) keyLoop() {
	defer n.wg.Done()
	sub := n.st.Subscribe("", 1024)
	defer sub.Close()
	t := time.NewTimer(time.Hour)
	t.Stop()
	defer t.Stop()
	box, take := map[string]bool{}, map[string]bool{}
	var dropped int64
	for {
		select {
		case <-n.ctx.Done():
			return
		case e := <-sub.Events():
			if sub.Dropped() != dropped {
				t.Reset(keyDelay) // once the burst is over, every space is looked at
			}
			into := box
			switch {
			case strings.HasPrefix(e.Key, "memberkey:"), strings.HasPrefix(e.Key, "member:"):
			case strings.HasPrefix(e.Key, "box:"), strings.HasPrefix(e.Key, "key:"):
				into = take
			default:
				continue
			}
			if n.keys.Keyring(e.Space) != nil {
				into[e.Space] = true
				t.Reset(keyDelay)
			}
		case <-t.C:
			if d := sub.Dropped(); d != dropped {
				// Events were lost in a burst: every space with keys is
				// looked at once.
				dropped = d
				sps, err := n.Spaces(n.ctx)
				if err != nil && n.ctx.Err() == nil {
					n.o.Logger.Warn("listing the spaces to take keys in", "err", err)
				}
				for _, sp := range sps {
					if n.keys.Keyring(sp.ID) != nil {
						box[sp.ID], take[sp.ID] = true, true
					}
				}
			}
			for id := range take {
				if _, err := n.takeKeys(n.ctx, id, ""); err != nil && n.ctx.Err() == nil {
					n.o.Logger.Warn("taking the keys sync brought", "space", id, "err", err)
				}
			}
			for id := range box {
				if err := n.BoxMissing(n.ctx, id); err != nil && n.ctx.Err() == nil {
					n.o.Logger.Debug("boxing keys to members who lack them", "space", id, "err", err)
				}
			}
			clear(box)
			clear(take)
		}
	}
}
