package node

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/minca-go/minca/judge"
)

// SignOut signs the node out (06 §1.2): in every space its session key
// wrote in that the node keeps, a revoke of the key with a cutoff at what
// it wrote there (each collection's last log place), then it forgets the
// key, its note and its places. What the key signed up to the cutoffs
// keeps counting; anything signed with a copy of it after does not. The
// node writes nothing more until it is opened again (with the account key
// it then makes a new session key). The revokes reach other peers as this
// node next syncs.
func (n *Node) SignOut(ctx context.Context) error {
	sg, err := n.sess.current()
	if err != nil {
		return err
	}
	lines, err := n.sess.places.Read()
	if err != nil {
		return err
	}
	for _, sp := range slices.Sorted(maps.Keys(lines)) {
		if _, ok, err := judge.GenesisOf(ctx, n.st, sp); err != nil {
			return err
		} else if !ok {
			continue
		}
		if _, err := n.Revoke(ctx, sp, sg.DID(), sg.Root(), lines[sp]); err != nil {
			return fmt.Errorf("minca/node: signing out: the revoke in %s: %w", sp, err)
		}
	}
	return n.sess.forget()
}
