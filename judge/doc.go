// Package judge is the judge of 02 §9: what decides, for the engine, whether
// a version is stored and whether it stands (DESIGN.md, The engine). The
// engine applies the verdicts; the node, a carrier, the store verbs and the
// benchmarks all judge with what is here, so every store holds what the same
// rules let in.
//
// # Where each check lives
//
//   - [Judge]: the checks that need no access history — shape (§4.6), the
//     crypto gate (§3.3) with a cache of passing verdicts (§3.2), the
//     capability gate (§9.3), retain on the access collections and stubs
//     (§4.5), the chain and the first version's key (§4.7, §4.1), later
//     while what it names is not held (§9.5). Every root may write: it is
//     the bound the full judge is measured against.
//   - [SpaceJudge]: the full judge (docs/spaces.md) — Judge, then the
//     space's access history as of the version's seen (package space's
//     replay): membership, grants, the rules in force, withdrawn when a
//     change it had not seen takes that away (§9.4), re-judging stored
//     versions both ways as the history grows ([SpaceJudge.Restand]).
//   - [PrivateJudge]: SpaceJudge with what a private space adds
//     (docs/private-spaces.md §9): sealed bodies, and with the space's keys
//     the checks that read a body.
//   - [AddGenesis], [GenesisOf]: a space's genesis kept beside the store's
//     versions, which the full judge reads a space from.
//   - [Recheck]: every stored version judged again against the replay, for
//     store check.
//   - judge/judgetest: the memory store under the full judge, holding one
//     space, that its tests and others' stand on.
//
// # API
//
//	(&Judge{Notes}).Check, Decide; Vouch(versions)                   // engine.Judge
//	NewSpaceJudge(notes) *SpaceJudge; .Source = store                 // + engine.Restander, engine.Forgetter
//	(*SpaceJudge).History, WithHistory, Preview
//	NewPrivateJudge(notes, keys KeyRings) *PrivateJudge
//	AddGenesis(ctx, store, genesis); GenesisOf(ctx, store, space)
//	Recheck(ctx, store, notes) ([]string, error)
//	InClear(collection); DefinitionInForce(held, state, ring, collection)
//
// It imports engine, space, collection, seal and record; nothing here knows
// the node, the network or a store's backend. Check is safe for concurrent
// use; Decide and Restand are called by one store, one at a time.
package judge
