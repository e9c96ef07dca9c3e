// Package carry is the carry profile (06 §4.2–§4.4; docs/carriers.md): the
// records by which an account hands its spaces to a carrier, and the rules
// for reading them. The account's node writes them (package node); a
// carrier reads them (package carrier); both read and write them only
// through what is here, so the two sides agree on every byte.
//
// # Where each idea lives
//
//   - [DeriveSpace]: a carry space, derived from the account key, the
//     carrier's did and a generation, so every device of the account
//     derives the same one and nobody else can (06 §4.2 step 1).
//   - [Carrier], [ReadCarrier]: a sys.carrier record of the account's
//     registry, naming a carrier and its carry space; one that names none
//     is ignored.
//   - [Pass], [NewPass], [ReadPass]: a sys.pass record in a carry space —
//     a space the carrier is to carry, with, for a private one, the read
//     seed it proves to peers (06 §4.1, §4.2); [ClosedKey] and [Closed]:
//     the account removed the carrier.
//   - [Wake], [ReadWake], [ReadAutomation]: an automation of the account's
//     own as a carrier can match it, from a version's outside alone (06
//     §4.4).
//   - [ViewInvite], [ParseViewInvite]: the view-only invite a carrier
//     joins its carry space by (06 §4.3); the carry grant that hands it
//     over is package connect's (connect.CarryGrant).
//   - [Current]: a space's current records of one collection, as both
//     sides read a registry or a carry space.
//
// # API
//
//	DeriveSpace(account, did, gen) (*space.Genesis, *seal.Key, error)
//	Carrier{DID, Name, Since, Gen, Space, Removed, Invite}.Key, Value, Live; ReadCarrier(key, body)
//	NewPass(genesis, key) *Pass; (*Pass).Value, ReadKeyPair; ReadPass(key, body); PassKey(space)
//	Closed(); IsClosed(body); ClosedKey
//	Wake{…}.Value, Matches; ReadWake(body); ReadAutomation(key, body); WakeKey(automation)
//	ViewInvite(genesis, key) (string, error); ParseViewInvite(text)
//	Current(ctx, store, space, collection) (map[string]*record.Version, error)
//
// It imports canonical, identity, record, seal, space and engine; nothing
// here knows the node, the network or a judge. Everything it reads may
// come from anyone: a bad record is an error or ignored, never a panic.
package carry
