package carrier

import "context"

// Network is how a carrier meets peers (06 §4.1; docs/sync.md): sync
// sessions over relays. It shows the carrier as Self (from: null), syncs
// each space of Spaces — proving ReadKey to peers of a private one — hands
// everything that arrives to Admit, serves what the store holds, and
// follows Changed for spaces added or dropped. Reporting its sync state is
// its own. The sync sessions implement it; the carrier needs nothing else
// from them.
type Network interface {
	Run(ctx context.Context, c *Carrier) error
}

// Run runs the carrier on a network until ctx ends or the network stops.
func (c *Carrier) Run(ctx context.Context, n Network) error {
	return n.Run(ctx, c)
}
