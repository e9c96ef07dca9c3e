// Package space is our profile of 03 — Spaces (DESIGN.md, Spaces;
// docs/spaces.md): a space's genesis, the formats of the twelve access
// collections (02 §4.5), and the replay of a space's access history — who
// is a member with which roles and grants, which keys are revoked and what
// each revoke keeps (06 §2.9), which writers' lines are proven forked (02
// §4.10), and which definitions are in force, with their first definers,
// rivals and contested collections (02 §6.3).
//
//	NewGenesis(GenesisOptions) (*Genesis, error)        // and ParseGenesis, ParseGenesisFor, GenesisFromValue
//	ReadChange(g, v, root, Env) (*Change, error)        // an access version's key and body formats, its note's command
//	NewHistory(g, Env) *History
//	(*History).Check(c) error                           // judged as of its own seen: a *record.Refusal, a *MissingError
//	(*History).Add(c) (Result, error)                   // and which changes' counting it changed, whose versions it affects
//	(*History).At(seen) (*State, error); Now() *State   // states as of a set of changes, and with every change
//	(*History).JudgeStored(Request, seen) *record.Refusal
//	(*State).Judge(Request) *record.Refusal             // 02 §9.4 step 3 for a version
//	(*State).InForce(collection); Definition(name); Members(); AllRoles(); Revoked(); Forked(); …
//	Codes() []string
//
// # The merge rule
//
// Which changes count is a function of the changes alone — the graph their
// seen makes and what they say — never of their ids or of the order a
// peer added them in: a change counts unless a change it did not see, and
// that did not see it, takes from it what it used (and it takes nothing
// from that one), or the changes it saw no longer let its author make it.
// Concurrent latest changes to one thing merge to the least of them. The
// reasons are in docs/spaces.md §5.
//
// # Bounds and costs
//
// Everything read comes from other members. No input panics; every refusal
// is a *record.Refusal with a code of [Codes]. Bodies are bounded as
// docs/spaces.md says (64 roles, 64 grants a role, 4,096 kept places, 8
// relays, 16 keepers, 16 founders). A History keeps each change it holds
// in a few hundred bytes; adding a change that saw every head is constant
// work, states as of earlier points are cached (at most 512), and one
// written as of an older point costs what it is concurrent with.
//
// # Concurrency
//
// Genesis, Grant and Change values are immutable and safe to share. A
// History and the States it returns are not safe for concurrent use; a
// State is valid until its History is next changed.
package space
