// Package connect is 06 §2–§3 and §4.3: how an app or a program comes to
// act for an account without its seed. It holds the account home
// protocol's requests and grants, the checks each side MUST make, the
// home's connections and what disconnecting revokes, and connecting a
// program by code — the code, its room, the channel (our profile of 01
// §15.2, in internal/channel) and both sides as state machines independent
// of the transport. docs/connect.md says all of it precisely enough for a
// second implementation.
//
// # The app and the home (06 §2)
//
//	ParseHomeRequest(data, origin) (*ConnectRequest, *ProposeRequest, error)  // §2.3 step 3–4, §2.4, §2.11
//	KeyProof{Audience, RecordsOnly, Origin}.Statement / Sign / Check           // §2.4
//	NewHome(HomeOptions{Origin, SessionKey, Store}) (*Home, error)             // §2.5, §2.10
//	(*Home).Check(ctx, r, origin) error                                         // before asking the person
//	IssueGrant(r, GrantOptions) (*Grant, error); TermsFor(…)                    // §2.5 steps 4, 5, 7
//	(*Home).Remember(ctx, r, origin, GrantedBy(g)) (Remembered, error)          // §2.5 step 6, §4.3
//	(*Home).DisconnectApp(ctx, origin) / DisconnectKey(ctx, did) (Disconnected, error)
//	Reach.Where(AccountWrites) []string                                         // where each sys.revoke goes
//	(*Home).ProposalReach(ctx, origin); ProposalReach.Check(kept)               // §2.11 steps 1–3
//	ParseGrant(data) (*Grant, error); CheckGrant(g, GrantCheck) error           // the app's side, §2.6
//	ParseCarryGrant(data); CheckCarryGrant(g, InviteReader) error               // the carrier's side, §4.3
//
// # Connecting by code (06 §3)
//
//	NewCode() (Code, error); CodeIn(text) (Code, error); (Code).Room(); (Code).Link(page)
//	ConnectPage(typed) (page, origin, error)                                    // §2.2
//	NewProgram(ProgramOptions) (*Program, error); RunProgram(ctx, room, p, ask, opts) (*Grant, error)
//	NewHomeExchange(code, origin) (*HomeExchange, error); RunHome(ctx, room, h, decide, opts) error
//	(*Home).GrantCode(ctx, ask, GrantOptions) (*Grant, error)                   // the person allowed it
//
// A [Room] is one side's place in the code's relay room: the transport's
// relay rooms implement it, and connecttest has one in memory for tests.
//
// # Guarantees
//
// Everything read from an app, a program, a home or a relay is untrusted:
// no input panics, and every refusal is a [*Refusal] with a stable code
// ([Codes]) and a message naming the rule and its 06 section. Messages on
// the code channel are bounded (MaxClearMessage, MaxSealedMessage,
// MaxAnswerMessage), and so is everything a side keeps for peers
// (MaxPeers). A message a side ignores changes nothing.
//
// # Concurrency
//
// [Home] and [MemStore] are safe for concurrent use; [Home.Remember]
// re-checks a request under the lock it keeps the connection under, so two
// grants racing for one key cannot both be sent. [Program] and
// [HomeExchange] are not: [RunProgram] and [RunHome] drive each from one
// goroutine. Values returned (grants, requests, connections) are the
// caller's.
package connect
