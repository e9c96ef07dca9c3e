// Package carrier is a carrier (06 §4): a program that keeps an account's
// spaces online and backed up without being able to read them.
//
// A carrier holds its own P-256 key, the key of each carry space an account
// gave it (by a CarryGrant, 06 §4.3), the passes in those carry spaces, and
// the versions of each carried space exactly as they travel. It holds no
// seed, no space key of a carried space, no invite secret and no note: it
// signs nothing but its proofs of who it is and of the read keys its passes
// give, and writes no version. Everything it takes in goes through the same
// judge as a member's node (judge.PrivateJudge); in a carried private space it
// holds no key, so it judges as a keyless peer does, skipping onePer, fixed
// and tags (02 §7.3, §7.4, §8.4), and stores what passes the rest. Its own
// carry spaces it reads in full.
//
// What it reads in a carry space (docs/carriers.md), by package carry's
// rules, the same the account's node writes them by:
//   - sys.pass records: for each a space it carries, with the read key it
//     proves to peers of a private space (06 §4.1, §4.2);
//   - carry:closed: the account removed it; it stops carrying for that
//     account and forgets its carry space and passes;
//   - sys.wake records: the account's own automations, which it matches
//     against arriving versions from their outside alone and reports as
//     events (06 §4.4).
//
// The network loop — sync sessions over relays — is not here: a Network
// runs it, given the carrier's Self (transport.Carrier: from null on the
// wire), the spaces it carries and who may read them (Spaces, MayRead: the
// shape of a sync host), the read keys to prove, and its store. The
// carrier follows its store's events, so what a session admits there is
// read as what Admit takes in. Its store is any store URL (package store), an S3 mirror
// included; nothing in it is plaintext of a private space, and its secrets
// (its key, its carry spaces' keys) stay in its directory, not the store.
//
// API:
//
//	Open(ctx, *Options) (*Carrier, error); (*Carrier).Close
//	(*Carrier).DID, Self, Store, Accept(ctx, *connect.CarryGrant), Accounts, Carried, Relays, ReadKey
//	(*Carrier).Spaces(ctx), MayRead(ctx, space, peer), Changed — what a sync host answers
//	(*Carrier).Admit(ctx, from, versions) — versions in, through the judge
//	(*Carrier).Subscribe(buffer) *Subscription — Event: carrying, dropped, disconnected, wake
//	Network, Run(ctx, Network)
//
// It stands on packages judge, carry, connect and store; it does not link
// the node.
//
// A Carrier's methods are safe for concurrent use.
package carrier
