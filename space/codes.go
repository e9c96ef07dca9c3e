package space

import "github.com/minca-go/minca/record"

// Reason codes of our profile of 03 — Spaces. They are a stable contract:
// tools print them, and tests, peers and people match on them. Every
// refusal is a *record.Refusal carrying one; [Codes] lists them all.
const (
	// The genesis (docs/spaces.md, Genesis).
	CodeGenesisShape = "genesis/shape" // a member missing, unknown or of the wrong type, or a value out of range
	CodeGenesisID    = "genesis/id"    // the genesis does not hash to the space id it was given for

	// An access change read alone (docs/spaces.md, The access collections).
	CodeAccessBody   = "access/body"   // the body is not the collection's format
	CodeAccessKey    = "access/key"    // the key is not the one the body gives
	CodeAccessDelete = "access/delete" // a delete where the collection has none (only sys.role, sys.invite, sys.collection, sys.relays, sys.keepers do)
	CodeAccessProof  = "access/proof"  // an invite's signature or a fork's proof does not check out

	// An access change judged as of its own seen (docs/spaces.md, Who may
	// make a change).
	CodeAccessMember  = "access/member"  // its author is not a member as of what it saw
	CodeAccessGrant   = "access/grant"   // its author holds no grant of the change's command (/space/…, /collection/define)
	CodeAccessCover   = "access/cover"   // it gives, takes or names more than its author holds
	CodeAccessRole    = "access/role"    // it names a role that does not exist as of what it saw
	CodeAccessNothing = "access/nothing" // it removes, closes or deletes what does not exist as of what it saw (02 §6.3)
	CodeAccessFounder = "access/founder" // a founder's act by someone who is not one, or a removal of a founder
	CodeAccessInvite  = "access/invite"  // a join whose invite is not open, is for other roles, or was opened before the member's removal
	CodeAccessRevoked = "access/revoked" // its key was revoked up to before it, as of what it saw (06 §2.9)
	CodeAccessForked  = "access/forked"  // its key's line was proven forked at or before it, as of what it saw (02 §4.10)
	CodeAccessPublic  = "access/public"  // a key change in a public space, which has no key

	// What seen names (02 §3.1).
	CodeSeenNotAccess = "seen/not-access" // seen names a held version that is not an access change of this space

	// A version judged as of its seen (02 §9.4 steps 2–3).
	CodeStandingAccount   = "standing/account"   // in a space that admits only the account itself, a note that does not grant /account/write (02 §9.4 step 2)
	CodeStandingContested = "standing/contested" // its collection is contested with no definition in force as of seen (02 §6.3)
	CodeStandingMember    = "standing/member"    // its root is not a member as of seen
	CodeStandingGrant     = "standing/grant"     // its root holds no grant for what it does as of seen
	CodeStandingRevoked   = "standing/revoked"   // its key was revoked up to before it as of seen (06 §2.9)
	CodeStandingForked    = "standing/forked"    // its key's line was proven forked at or before it as of seen (02 §4.10)

	// Why a stored version is withdrawn (02 §9.4 last paragraph, §9.5): a
	// change it had not seen took it away.
	CodeWithdrawnMember  = "withdrawn/member"  // its root was removed since
	CodeWithdrawnGrant   = "withdrawn/grant"   // its root no longer holds a grant for it (a role taken, a change it saw struck)
	CodeWithdrawnRevoked = "withdrawn/revoked" // its key was revoked before it
	CodeWithdrawnForked  = "withdrawn/forked"  // its key's line was proven forked at or before it (an access change too, whatever the proof saw)
	CodeWithdrawnStruck  = "withdrawn/struck"  // an access change that does not count: a concurrent change took its author's power, or one it rests on was struck
)

// Codes lists every reason code this package produces, for documentation
// and for tools that check a code is known.
func Codes() []string {
	return []string{
		CodeGenesisShape, CodeGenesisID,
		CodeAccessBody, CodeAccessKey, CodeAccessDelete, CodeAccessProof,
		CodeAccessMember, CodeAccessGrant, CodeAccessCover, CodeAccessRole, CodeAccessNothing,
		CodeAccessFounder, CodeAccessInvite, CodeAccessRevoked, CodeAccessForked, CodeAccessPublic,
		CodeSeenNotAccess,
		CodeStandingAccount, CodeStandingContested, CodeStandingMember, CodeStandingGrant,
		CodeStandingRevoked, CodeStandingForked,
		CodeWithdrawnMember, CodeWithdrawnGrant, CodeWithdrawnRevoked, CodeWithdrawnForked, CodeWithdrawnStruck,
	}
}

func refuse(code, field, msg string) *record.Refusal {
	return &record.Refusal{Code: code, Field: field, Message: msg}
}
