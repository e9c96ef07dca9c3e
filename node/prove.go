package node

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// proveDelay gathers what a sync brings in a burst — a fork's other
// branch, and often a peer's proof of it — before the node proves a fork.
const proveDelay = 200 * time.Millisecond

// proveLoop proves the forks and breaks of writers' lines the store finds
// on arrival (02 §4.10: "a peer that holds both versions of a fork SHOULD
// prove it to the space by writing sys.fork"), a burst at a time. When it
// starts, and when events were lost, it looks at every space the node
// keeps, so a fork found before a crash is proven too.
func (n *Node) proveLoop() {
	defer n.wg.Done()
	sub := n.st.Subscribe("", 256)
	defer sub.Close()
	t := time.NewTimer(proveDelay)
	defer t.Stop()
	todo, all := map[string]bool{}, true
	var dropped int64
	for {
		select {
		case <-n.ctx.Done():
			return
		case e, ok := <-sub.Events():
			if !ok {
				return
			}
			if e.Kind == engine.EventLine || sub.Dropped() != dropped {
				todo[e.Space] = true
				t.Reset(proveDelay)
			}
		case <-t.C:
			if d := sub.Dropped(); d != dropped {
				dropped, all = d, true
			}
			if all {
				sps, err := n.Spaces(n.ctx)
				if err != nil && n.ctx.Err() == nil {
					n.o.Logger.Warn("listing the spaces to prove forks in", "err", err)
				}
				for _, sp := range sps {
					todo[sp.ID] = true
				}
				all = false
			}
			for id := range todo {
				if _, err := n.ProveForks(n.ctx, id); err != nil && n.ctx.Err() == nil && !errors.Is(err, ErrClosed) {
					n.o.Logger.Warn("proving a fork", "space", id, "err", err)
				}
			}
			clear(todo)
		}
	}
}

// ProveForks writes a sys.fork (docs/spaces.md §4) for each writer's line
// of the space that the store holds a fork or break of (02 §4.10) and that
// no proof the node holds already proves at that place or lower: the proof
// of the line's lowest place the store holds, once, whatever order its
// versions came in. It writes nothing where the node's account is not a
// member, nor in a space it does not keep, and returns what it wrote.
// Calls are made one at a time.
func (n *Node) ProveForks(ctx context.Context, spaceID string) ([]*record.Version, error) {
	n.proveMu.Lock()
	defer n.proveMu.Unlock()
	found, err := n.st.LineProofs(ctx, spaceID)
	if err != nil {
		return nil, err
	}
	// The lowest place of each line; of two proofs there, the one whose
	// versions' ids sort first, so every node picks the same.
	lowest := map[record.Line]*record.LineProof{}
	for _, p := range found {
		l := p.Line()
		if cur, ok := lowest[l]; !ok || p.From() < cur.From() || p.From() == cur.From() && p.A.ID+p.B.ID < cur.A.ID+cur.B.ID {
			lowest[l] = p
		}
	}
	lines := make([]record.Line, 0, len(lowest))
	for l := range lowest {
		lines = append(lines, l)
	}
	slices.SortFunc(lines, func(a, b record.Line) int {
		return strings.Compare(a.Author+"\n"+a.Collection, b.Author+"\n"+b.Collection)
	})
	var wrote []*record.Version
	for _, l := range lines {
		p := lowest[l]
		proven, member := false, false
		ok, err := n.judge.WithHistory(ctx, spaceID, func(h *space.History) error {
			now := h.Now()
			from, forked := now.ForkedFrom(l.Author, l.Collection)
			proven = forked && from <= p.From()
			member = now.IsMember(n.Account())
			return nil
		})
		if err != nil || !ok || !member {
			return wrote, err
		}
		if proven {
			continue
		}
		v, err := n.writeAccess(ctx, spaceID, space.KindFork, "fork:"+space.LineTag(l.Author, l.Collection),
			canonical.NewObject("proof", p.Value()))
		var we *WriteError
		if errors.As(err, &we) {
			// Refused before it left: this node may not prove it (a note
			// that does not grant /space/fork, its own key's line forked).
			n.o.Logger.Debug("not proving a fork", "space", spaceID, "author", l.Author, "collection", l.Collection, "err", err)
			continue
		}
		if err != nil {
			return wrote, err
		}
		wrote = append(wrote, v)
	}
	return wrote, nil
}
