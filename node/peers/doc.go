// Package peers is a node's sync sessions with other nodes: our profile of
// 04 and 05, written down in docs/sync.md §7–§9 (DESIGN.md, Negentropy and
// sync).
//
// # API
//
//	New(Host, *Options) (*Peers, error)   // NodeHost(n) for a node; a carrier is a Host too; Options.Limits
//	(*Peers).Run(ctx)                     // dial Options.Peers, join Options.Relays' rooms, keep sessions
//	(*Peers).Handler(ctx, *ServerOptions) // accept peers at transport.PathPeer
//	(*Peers).Serve(ctx, conn, opener, via); Sync(ctx, conn, spaces) (Summary, error)
//	(*Peers).Status(); Totals()           // minca peers, GET /v1/peers
//	MayRead(ctx, histories, space, peer)  // the read rule, 06 §4; docs/sync.md §7.2
//
// # Guarantees
//
//   - A session per space reconciles by negentropy over the engine's sync
//     order (NEG-OPEN, NEG-MSG, NEG-CLOSE, NEG-ERR), asks for what it lacks
//     in bounded WANT batches and takes VERSIONS as the sender keeps them
//     (stubs as stubs), then stays live and pushes what is newly admitted.
//   - Every version received goes through the host's judge (02 §9) in
//     batches; refusals are remembered per (peer, id), never by id alone.
//   - A peer that may not read a space gets exactly the answer a space not
//     held gets; the rule is checked at open and again while sending.
//   - Every queue is bounded, in bytes per connection both ways
//     (Limits.SendQueue, RecvQueue): a peer that asks and does not read is
//     not answered further and not read further, and ends with sync/slow;
//     a slow or hostile peer slows or ends only its own sessions, never the
//     node's writes or other peers'.
//   - What a peer may open is bounded by its key and by its address: live
//     sessions, and NEG-OPENs a second; a peer that sends forgeries is
//     refused for a while (Limits; docs/sync.md §10).
//   - Every session of a space shares one store subscription and one
//     sync-order index, rebuilt only after the space changed.
//   - A dropped connection resumes by reconciling again, never by resending
//     everything.
package peers
