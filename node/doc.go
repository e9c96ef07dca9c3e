// Package node is a Minca node for one account (DESIGN.md). For now it is
// the judge of 02 §9 that the engine applies: [Judge], the checks that need
// no access history, and [SpaceJudge], the full judge that adds the
// space's access history (package space, docs/spaces.md): membership and
// grants as of seen, the rules in force, and re-judging stored versions as
// the history grows. A space's genesis is kept with the store
// ([AddGenesis], [GenesisOf]); [Recheck] judges every stored version again
// against the replay, for store check.
package node
