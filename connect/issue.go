package connect

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/minca-go/minca/identity"
)

// NoteTerms are the command, subject and policy of a grant's note (06
// §2.5 step 5, grantTerms).
type NoteTerms struct {
	Cmd string
	Sub string
	Pol []any
}

// TermsFor works out a note's terms (06 §2.5 step 5): cmd "/" for write,
// "/record" for write with recordsOnly, "/record/read" for read; and by
// the spaces granted — scope account: sub the account, no policy; scope
// spaces with one space: sub "space:<id>", no policy; with several: sub
// the account and [["or", [["==", ".space", id], …]]], the ids sorted;
// with none: sub the account and [["not", ["and", []]]], which nothing
// satisfies. A carrier gets no note.
func TermsFor(access, scope string, recordsOnly bool, account string, spaces []string) (NoteTerms, error) {
	var t NoteTerms
	switch {
	case access == AccessWrite && recordsOnly:
		t.Cmd = identity.CmdRecord
	case access == AccessWrite:
		t.Cmd = identity.CmdTop
	case access == AccessRead:
		t.Cmd = identity.CmdRecordRead
	default:
		return t, fmt.Errorf("minca/connect: access %q gets no note (06 §2.5, §4.3)", access)
	}
	t.Sub, t.Pol = account, []any{}
	if scope == ScopeAccount {
		return t, nil
	}
	ids := slices.Clone(spaces)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	switch len(ids) {
	case 0:
		t.Pol = []any{[]any{"not", []any{"and", []any{}}}}
	case 1:
		t.Sub = identity.SpaceSubject(ids[0])
	default:
		eqs := make([]any, len(ids))
		for i, id := range ids {
			eqs[i] = []any{"==", ".space", id}
		}
		t.Pol = []any{[]any{"or", eqs}}
	}
	return t, nil
}

// GrantOptions are what the home grants a request with, once the person
// approved it (06 §2.5). The home has made the spaces in create and the
// invites (steps 1–3), which need a node; IssueGrant does steps 4, 5 and 7.
type GrantOptions struct {
	// Account signs the note: the account's root key. Required.
	Account identity.Signer
	// Name is the account's name, for showing who is connected.
	Name string
	// Spaces are the spaces granted, each with its view-only invite and,
	// for a private space under scope spaces, its member key.
	Spaces []GrantSpace
	// ContactsSpace is, with contacts and scope spaces, which of Spaces is
	// the contacts space.
	ContactsSpace string
	// AccountKey is given with scope account, and only then.
	AccountKey []byte
	// ContactKey is given with contacts or scope account, never with
	// recordsOnly (§2.8).
	ContactKey []byte
	// Relays are the relays the home uses.
	Relays []string
	// Days is the person's choice of lifetime; 0 means the request's, else
	// DefaultDays. It is kept within MinDays and MaxDays.
	Days int
	// MinDays and MaxDays are the home's own bounds (§2.5 step 4); 0 means
	// 1 and 365.
	MinDays, MaxDays int
	// Now is the time of granting; zero means time.Now().
	Now time.Time
}

// IssueGrant signs the note and makes the grant for an approved request
// (06 §2.5 steps 4, 5 and 7): expiresAt = now + round(days × 86400), the
// note from the account to r.Audience with exp expiresAt, nbf now, the
// terms of [TermsFor] and no meta. It refuses (a *Refusal, or an error
// for a misuse) what a home MUST NOT send: a grant by code for anything
// but records (§3), a contact key with recordsOnly (§2.8), an account key
// without scope account, a contact key without contacts or scope account,
// a carrier's request (which gets a CarryGrant, §4.3).
func IssueGrant(r *ConnectRequest, o GrantOptions) (*Grant, error) {
	if o.Account == nil {
		return nil, fmt.Errorf("minca/connect: issuing a grant: no account key")
	}
	if r.Access == AccessCarry {
		return nil, fmt.Errorf("minca/connect: a carrier is answered with a CarryGrant, not a grant (06 §4.3)")
	}
	if r.Via == ViaCode && (!r.RecordsOnly || r.Access != AccessWrite || r.Scope != ScopeAccount) {
		return nil, refuse(CodeHomeRecordsOnly, "", "a program connected by code is granted records only, in the whole account, and nothing else (06 §3)")
	}
	if r.RecordsOnly && o.ContactKey != nil {
		return nil, refuse(CodeHomeRecordsOnly, "contactKey", "a records-only grant never carries the contact key (06 §2.5, §2.8)")
	}
	if o.AccountKey != nil && r.Scope != ScopeAccount {
		return nil, fmt.Errorf("minca/connect: the account key goes only with scope account (06 §2.5)")
	}
	if o.ContactKey != nil && !r.Contacts && r.Scope != ScopeAccount {
		return nil, fmt.Errorf("minca/connect: the contact key goes only with contacts or scope account (06 §2.5)")
	}
	ids := make([]string, len(o.Spaces))
	for i, s := range o.Spaces {
		ids[i] = s.ID
	}
	if o.ContactsSpace != "" && (!r.Contacts || r.Scope != ScopeSpaces || !slices.Contains(ids, o.ContactsSpace)) {
		return nil, fmt.Errorf("minca/connect: contactsSpace names one of the spaces granted, with contacts and scope spaces (06 §2.5)")
	}
	days, err := lifetime(o.Days, r.Days, o.MinDays, o.MaxDays)
	if err != nil {
		return nil, err
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	nbf := now.Unix()
	expiresAt := nbf + int64(math.Round(float64(days)*86400))
	terms, err := TermsFor(r.Access, r.Scope, r.RecordsOnly, o.Account.DID(), ids)
	if err != nil {
		return nil, err
	}
	note, err := identity.IssueNote(o.Account, identity.NoteOptions{Aud: r.Audience, Sub: terms.Sub, Cmd: terms.Cmd,
		Pol: terms.Pol, Exp: expiresAt, Nbf: nbf})
	if err != nil {
		return nil, fmt.Errorf("minca/connect: issuing a grant: %w", err)
	}
	return &Grant{DID: o.Account.DID(), Name: o.Name, Note: note, Access: r.Access, Scope: r.Scope,
		Spaces: slices.Clone(o.Spaces), AccountKey: o.AccountKey, ContactKey: o.ContactKey,
		ContactsSpace: o.ContactsSpace, Relays: slices.Clone(o.Relays), ExpiresAt: expiresAt}, nil
}

// lifetime is 06 §2.5 step 4's days: the person's choice, else the
// request's, else 7, within the home's bounds.
func lifetime(chosen, asked, lo, hi int) (int, error) {
	if lo == 0 {
		lo = MinDays
	}
	if hi == 0 {
		hi = MaxDays
	}
	if lo < MinDays || hi > MaxDays || lo > hi {
		return 0, refuse(CodeHomeLifetime, "days", fmt.Sprintf("the home's bounds on a note's days are 1 ≤ min ≤ max ≤ 365, not %d–%d", lo, hi))
	}
	days := DefaultDays
	switch {
	case chosen != 0:
		days = chosen
	case asked != 0:
		days = asked
	}
	return min(max(days, lo), hi), nil
}
