package connect

// Refusal is why connect refuses something: a request, a grant, a carry
// grant, a proposal, a message of the code channel, or an act of the home's
// bookkeeping. It carries a stable reason code ([Codes]), the member it
// concerns (a path such as "create[2].name", or "" for the whole) and a
// message naming the rule, with the 06 section it comes from.
type Refusal struct {
	Code    string
	Field   string
	Message string
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

// ReasonCode is the stable reason code, for tools that print one.
func (r *Refusal) ReasonCode() string { return r.Code }

func refuse(code, field, msg string) *Refusal {
	return &Refusal{Code: code, Field: field, Message: msg}
}

// Reason codes. They are a stable contract: tools print them, and tests,
// homes, apps and people match on them. docs/connect.md lists them with
// the rule each enforces.
const (
	// A ConnectRequest read from an app (06 §2.4).
	CodeRequestShape       = "request/shape"        // not an object; a member unknown, missing or of the wrong type
	CodeRequestVersion     = "request/version"      // v is not 1
	CodeRequestAudience    = "request/audience"     // audience does not start with did:key:
	CodeRequestAccess      = "request/access"       // access is not read, write or carry
	CodeRequestScope       = "request/scope"        // scope is not spaces or account
	CodeRequestName        = "request/name"         // name is not a string of at most 80 characters
	CodeRequestCreate      = "request/create"       // create is not 0–8 NewSpace
	CodeRequestDays        = "request/days"         // days is not an integer 1–365
	CodeRequestRecordsOnly = "request/records-only" // recordsOnly with access carry, with create, or with contacts
	CodeRequestVia         = "request/via"          // via from an app: only the home makes a request with via (§3)

	// The home's checks of a request it would grant (06 §2.5, §2.10, §3).
	CodeHomeProof       = "home/proof"         // proof does not verify under audience over the statement of §2.4
	CodeHomeOwnKey      = "home/own-key"       // audience is the home's own session key
	CodeHomeKeyHeld     = "home/key-held"      // audience is held, or was replaced, by a connection of another origin or via
	CodeHomeOtherKind   = "home/other-kind"    // audience is connected as the other kind (an app's key as a carrier, or back)
	CodeHomeRecordsOnly = "home/records-only"  // a grant by code for more than records, or a contact key with recordsOnly
	CodeHomeLifetime    = "home/lifetime"      // the home's own bounds on a note's days are not 1 ≤ min ≤ max ≤ 365
	CodeHomeNoConn      = "home/no-connection" // a proposal from an origin with no app connection (§2.11 step 1)
	CodeHomeNoReach     = "home/no-reach"      // a proposal from an app that may reach no space (§2.11 step 2)
	CodeHomeOutside     = "home/outside-reach" // a proposal naming a space outside the app's reach (§2.11 step 3)

	// A grant, read and checked by the app or program (06 §2.5, §2.6, §3).
	CodeGrantShape       = "grant/shape"        // a member missing or of the wrong type
	CodeGrantVersion     = "grant/version"      // v is not 2
	CodeGrantNote        = "grant/note"         // the note does not decode, does not verify, or has expired
	CodeGrantAudience    = "grant/audience"     // the note's aud is not the app's own key
	CodeGrantIssuer      = "grant/issuer"       // the note's iss is not grant.did
	CodeGrantRecordsOnly = "grant/records-only" // asked for records only, and the note's cmd is not under /record

	// A proposal of automations (06 §2.11).
	CodeProposeShape    = "propose/shape"    // a member unknown, missing or of the wrong type
	CodeProposeVersion  = "propose/version"  // v is not 2
	CodeProposeKind     = "propose/kind"     // kind is not "propose"
	CodeProposeName     = "propose/name"     // name is not a string of at most 80 characters
	CodeProposeCount    = "propose/count"    // automations is not a list of 1–8
	CodeProposeProposal = "propose/proposal" // a Proposal's name, then, spaces or open is not valid
	CodeProposeQuery    = "propose/query"    // when.query is not { collection, where? } of the right shape
	CodeProposeDepth    = "propose/depth"    // where nests more than 16 deep
	CodeProposedShape   = "proposed/shape"   // a Proposed answer that is not { v: 2, kind: "proposed", automations, versions? }

	// A carry grant, checked by the carrier (06 §4.3).
	CodeCarryShape  = "carry/shape"  // a member missing or of the wrong type
	CodeCarryKind   = "carry/kind"   // kind is not "carry"
	CodeCarryInvite = "carry/invite" // the invite does not read, is not to the named space, or carries no key
	CodeCarrySpace  = "carry/space"  // the space is not private with did its one founder and no roles
	CodeCarryPod    = "carry/pod"    // pod.dataPath has an empty or ".." segment

	// Connecting by code (06 §3).
	CodeCodeNone       = "code/none"       // no mc_ code in the text
	CodeCodeFrame      = "code/frame"      // a message that is not {type, from, payload} of a known type within its size
	CodeCodePayload    = "code/payload"    // a payload not of its message's shape
	CodeCodeSeal       = "code/seal"       // a sealed payload that does not open under this exchange's key, type and next seq
	CodeCodePeer       = "code/peer"       // a message from a peer that is not this exchange's, or out of its order
	CodeCodeCommitment = "code/commitment" // a point that does not hash to the commitment
	CodeCodeOrigin     = "code/origin"     // a home saying it lives at another origin than the one opened
	CodeCodeSpent      = "code/spent"      // a later hello, key or ask: one exchange a side, the code spent once asked
	CodeCodeCheck      = "code/check"      // the check the person gave does not match this exchange's
	CodeCodeDenied     = "code/denied"     // the home said no
	CodeCodeNobody     = "code/nobody"     // a home opened at a link nobody waits on any more
)

// Codes lists every reason code connect produces.
func Codes() []string {
	return []string{
		CodeRequestShape, CodeRequestVersion, CodeRequestAudience, CodeRequestAccess, CodeRequestScope,
		CodeRequestName, CodeRequestCreate, CodeRequestDays, CodeRequestRecordsOnly, CodeRequestVia,
		CodeHomeProof, CodeHomeOwnKey, CodeHomeKeyHeld, CodeHomeOtherKind, CodeHomeRecordsOnly,
		CodeHomeLifetime, CodeHomeNoConn, CodeHomeNoReach, CodeHomeOutside,
		CodeGrantShape, CodeGrantVersion, CodeGrantNote, CodeGrantAudience, CodeGrantIssuer, CodeGrantRecordsOnly,
		CodeProposeShape, CodeProposeVersion, CodeProposeKind, CodeProposeName, CodeProposeCount,
		CodeProposeProposal, CodeProposeQuery, CodeProposeDepth, CodeProposedShape,
		CodeCarryShape, CodeCarryKind, CodeCarryInvite, CodeCarrySpace, CodeCarryPod,
		CodeCodeNone, CodeCodeFrame, CodeCodePayload, CodeCodeSeal, CodeCodePeer, CodeCodeCommitment,
		CodeCodeOrigin, CodeCodeSpent, CodeCodeCheck, CodeCodeDenied, CodeCodeNobody,
	}
}
