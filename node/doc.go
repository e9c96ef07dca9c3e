// Package node is a Minca node for one account (DESIGN.md, The node and its
// local API; 06 §1): its store, its session key and note, the spaces it
// keeps, the write path, events, queries and mirrors. Every version it
// stores, its own and peers' alike, goes through one judge of 02 §9
// (package judge's PrivateJudge).
//
// # Where each idea lives
//
// The node writes, keeps and reads; it decides nothing alone and defines
// no format another program must read:
//
//   - whether a version is stored and stands: package judge, which the
//     node, a carrier, the store verbs and the benchmarks all judge with;
//   - the carry profile's records (carry spaces, sys.carrier, passes,
//     wakes, view invites): package carry, which the node writes them by
//     (carriers.go, carry_fill.go) and a carrier reads them by;
//   - the version store and its change log: package engine; the one
//     admission pipeline (engine.Pipeline: check, decide, commit) that the
//     write path (writer.go), peer sessions (node/peers/receive.go), store
//     import and a mirror's read each feed; a store from its URL, and
//     which sources' waiting versions are bounded: package store;
//   - events: one eventOf (pump.go) makes each from the change log's entry
//     (space, key, current after, verdict, forks), live and when read
//     again after a restart;
//   - spaces' access history and its replay: package space; private
//     spaces' sealing and keys: package seal; queries: package index;
//   - sync sessions with peers: node/peers; the local HTTP API: node/api.
//
// # API
//
//	Open(ctx, *Options) (*Node, error)        // one process per node directory
//	(*Node).Put(ctx, space, collection, body, *PutOptions) (*record.Version, error)   // 02 §4
//	(*Node).Delete, CreateSpace, JoinInvite, JoinGenesis, Invite, Assign, Remove, Leave,
//	        Define, DefineRole, Revoke, Members, Spaces, SignOut                    // 06 §1.2–§1.3
//	(*Node).Subscribe(space, after, buffer) (*Subscription, error)                  // events, by cursor
//	(*Node).Query(ctx, space, query) (QueryPage, error); WatchQuery               // 06 §2.11, package index
//	(*Node).Get, History, Export → Read{Version, Opened, Standing, Stored}; (Read).JSON() // reads, sealed bodies opened
//	(*Node).ChangeKey, BoxMissing, Open, PutFile, File                            // private spaces, docs/private-spaces.md §14
//	(*Node).Store(); Judge(); Account(); Session(); Dir(); Close()
//
// The store is opened with package store (a local one: pebble:, sqlite:,
// memory:; the node directory records which), with package index as its
// engine.Indexer, so the indexes queries read commit with the versions;
// folders and buckets are mirrors (Options.Mirrors), run in both
// directions while the node runs.
//
// # Guarantees
//
//   - Every local write is derived (key, seq, prev, retain, tags, seen, its
//     log place), checked against the collection's schema and links, and
//     judged by the same judge as a peer's version before it is signed; a
//     write the node refuses is a *WriteError naming the rule, and nothing
//     is signed. A write is durable when Put returns.
//   - The writer's log places are kept under a file lock in the node
//     directory, appended to their log before a version is signed and
//     synced before it is stored (whence it leaves): two processes, a
//     process killed between signing and storing, or a machine that loses
//     power, never reuse a place a version that left was signed at.
//   - The judge is package judge's full judge with a private space's
//     checks, opening bodies with the keys the node holds: the space's
//     access history (package space) — membership and grants as of seen,
//     the rules in force — re-judging stored versions as the history grows.
//   - Events are delivered in commit order with a cursor that resumes
//     without a gap or a repeat, across restarts; a subscriber that falls
//     behind is dropped with [ErrSlow], never slowing a write.
//   - Queries answer only readable current versions (02 §9.5), "$me" the
//     account; a malformed one is an *index.Error naming the bad member.
//   - In a private space (CreateOptions.Private) bodies, links and files
//     are sealed before they are signed, never written in the clear, and
//     the keys are kept in the node directory only; reads and the index
//     give what a sealed body holds beside it, as "opened", and the index
//     is the local store's alone: nothing a mirror, a segment or a backup
//     carries holds plaintext or a key (docs/private-spaces.md §14).
//
// The node's methods are safe for concurrent use.
package node
