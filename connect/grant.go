package connect

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// GrantVersion is the v of every grant (06 §2.5): 2 since the note is a
// delegation in the UCAN 1.0 profile. An app refuses any other, and drops
// a kept grant of another.
const GrantVersion = 2

// Limits of a grant as read. The spec names none; these keep what a peer
// hands over bounded, far past what a home grants.
const (
	MaxGrantSpaces = 4096 // entries of spaces
	MaxGrantRelays = 64   // entries of relays
)

// Grant is what the home answers a request with (06 §2.5): a note from
// the account to the app's key, and what the app needs to start a node
// under it (§2.7). The home sends it without Home; the app adds the connect
// page it opened. A Grant returned by [ParseGrant] has the right shape;
// [CheckGrant] is whether the app may use it (§2.6).
type Grant struct {
	DID           string         // the account
	Name          string         // the account's name, for showing who is connected
	Note          *identity.Note // from the account to the app's key
	Access        string         // AccessRead or AccessWrite
	Scope         string         // ScopeSpaces or ScopeAccount
	Spaces        []GrantSpace   // the spaces granted
	AccountKey    []byte         // with scope account: the account key (01 §11.1); nil when absent
	ContactKey    []byte         // with contacts or scope account, never with recordsOnly; nil when absent
	ContactsSpace string         // with contacts and scope spaces: which of Spaces is the contacts space
	Relays        []string       // relays the home uses; the app joins them too
	ExpiresAt     int64          // Unix seconds
	Home          string         // the connect page the app opened; "" as the home sends it
}

// GrantSpace is one granted space (06 §2.5): its id and name, a view-only
// invite, and for a private space under scope spaces the account's member
// key for it.
type GrantSpace struct {
	ID        string
	Name      string
	Invite    string
	MemberKey []byte // nil when absent
}

var b64 = base64.RawURLEncoding

// Value is the grant as JSON, as the home sends it (Home empty) or as the
// app keeps it (Home set).
func (g *Grant) Value() *canonical.Object {
	spaces := make([]any, len(g.Spaces))
	for i, s := range g.Spaces {
		o := canonical.NewObject("id", s.ID, "name", s.Name, "invite", s.Invite)
		if s.MemberKey != nil {
			o.Set("memberKey", b64.EncodeToString(s.MemberKey))
		}
		spaces[i] = o
	}
	o := canonical.NewObject("v", float64(GrantVersion), "did", g.DID, "name", g.Name, "note", g.Note.Object(),
		"access", g.Access, "scope", g.Scope, "spaces", spaces)
	if g.AccountKey != nil {
		o.Set("accountKey", b64.EncodeToString(g.AccountKey))
	}
	if g.ContactKey != nil {
		o.Set("contactKey", b64.EncodeToString(g.ContactKey))
	}
	if g.ContactsSpace != "" {
		o.Set("contactsSpace", g.ContactsSpace)
	}
	if g.Relays != nil {
		o.Set("relays", stringsValue(g.Relays))
	}
	o.Set("expiresAt", float64(g.ExpiresAt))
	if g.Home != "" {
		o.Set("home", g.Home)
	}
	return o
}

// WithHome is the grant as the app keeps it: home is the connect page it
// opened, never one the grant names (06 §2.5, §3).
func (g *Grant) WithHome(page string) *Grant {
	c := *g
	c.Home = page
	return &c
}

// ParseGrant reads a grant from JSON text. See [DecodeGrant].
func ParseGrant(data []byte) (*Grant, error) {
	v, err := canonical.Parse(data)
	if err != nil {
		return nil, refuse(CodeGrantShape, "", "not JSON: "+err.Error())
	}
	return DecodeGrant(v)
}

// DecodeGrant reads a grant (06 §2.5): v 2 (else grant/version: an app
// refuses any other, and drops a kept one), did, name, a note that decodes,
// access read or write, scope spaces or account, spaces a list of {id,
// name, invite, memberKey?}, expiresAt an integer, and accountKey,
// contactKey, contactsSpace, relays and home absent or of their types, the
// keys base64url. 06 does not close a grant to new members, so others are
// ignored. A refusal is a *Refusal.
func DecodeGrant(v any) (*Grant, error) {
	o, ok := v.(*canonical.Object)
	if !ok {
		return nil, refuse(CodeGrantShape, "", "a grant is a JSON object (06 §2.5)")
	}
	if ver, _ := o.Get("v"); ver != float64(GrantVersion) {
		return nil, refuse(CodeGrantVersion, "v", "a grant's v is 2; an app refuses any other (06 §2.5)")
	}
	g := &Grant{}
	bad := func(field, msg string) (*Grant, error) {
		return nil, refuse(CodeGrantShape, field, msg+" (06 §2.5)")
	}
	var err error
	for _, f := range []struct {
		name string
		dst  *string
	}{{"did", &g.DID}, {"name", &g.Name}, {"access", &g.Access}, {"scope", &g.Scope}} {
		x, _ := o.Get(f.name)
		str, ok := x.(string)
		if !ok {
			return bad(f.name, f.name+" is a string")
		}
		*f.dst = str
	}
	if g.Access != AccessRead && g.Access != AccessWrite {
		return bad("access", `access is "read" or "write"`)
	}
	if g.Scope != ScopeSpaces && g.Scope != ScopeAccount {
		return bad("scope", `scope is "spaces" or "account"`)
	}
	nv, _ := o.Get("note")
	if g.Note, err = identity.DecodeNote(nv); err != nil {
		return nil, refuse(CodeGrantNote, "note", "the note does not decode: "+err.Error()+" (06 §2.6)")
	}
	sv, _ := o.Get("spaces")
	sl, ok := sv.([]any)
	if !ok || len(sl) > MaxGrantSpaces {
		return bad("spaces", "spaces is a list of at most 4096 {id, name, invite, memberKey?}")
	}
	g.Spaces = make([]GrantSpace, 0, len(sl))
	for i, e := range sl {
		at := "spaces[" + strconv.Itoa(i) + "]"
		so, ok := e.(*canonical.Object)
		if !ok {
			return bad(at, "a granted space is an object {id, name, invite, memberKey?}")
		}
		var s GrantSpace
		for _, f := range []struct {
			name string
			dst  *string
		}{{"id", &s.ID}, {"name", &s.Name}, {"invite", &s.Invite}} {
			x, _ := so.Get(f.name)
			str, ok := x.(string)
			if !ok {
				return bad(at+"."+f.name, f.name+" is a string")
			}
			*f.dst = str
		}
		if s.MemberKey, err = optionalKey(so, "memberKey", at+"."); err != nil {
			return nil, err
		}
		g.Spaces = append(g.Spaces, s)
	}
	if g.AccountKey, err = optionalKey(o, "accountKey", ""); err != nil {
		return nil, err
	}
	if g.ContactKey, err = optionalKey(o, "contactKey", ""); err != nil {
		return nil, err
	}
	if x, ok := o.Get("contactsSpace"); ok {
		if g.ContactsSpace, ok = x.(string); !ok {
			return bad("contactsSpace", "contactsSpace, when present, is a string")
		}
	}
	if x, ok := o.Get("relays"); ok {
		if g.Relays, ok = stringList(x, MaxGrantRelays); !ok {
			return bad("relays", "relays, when present, is a list of at most 64 strings")
		}
	}
	ev, _ := o.Get("expiresAt")
	f, ok := ev.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
		return bad("expiresAt", "expiresAt is an integer number of Unix seconds")
	}
	g.ExpiresAt = int64(f)
	if x, ok := o.Get("home"); ok {
		if g.Home, ok = x.(string); !ok {
			return bad("home", "home, when present, is a string")
		}
	}
	return g, nil
}

// GrantCheck is what an app checks a grant against (06 §2.6).
type GrantCheck struct {
	// Audience is the app's own key: the note must be made out to it.
	Audience string
	// RecordsOnly is whether the app asked for records only; a program
	// connected by code always did (§3).
	RecordsOnly bool
	// Now, when not zero, is the time the note must not have expired by:
	// a note past its exp works for no live check (§2.9).
	Now time.Time
}

// CheckGrant makes the checks an app MUST make before using a grant (06
// §2.6), as a program connected by code must too (§3): v is 2 (by
// decoding), the note verifies as a note (its signature under iss, and not
// expired at c.Now), its aud is c.Audience, its iss is g.DID, and, asked
// for records only, its command is under /record. A refusal is a *Refusal.
func CheckGrant(g *Grant, c GrantCheck) error {
	n := g.Note
	if err := n.CheckSignature(nil); err != nil {
		return refuse(CodeGrantNote, "note", "the note does not verify: "+err.Error()+" (06 §2.6)")
	}
	if !c.Now.IsZero() && n.HasExp && c.Now.Unix() >= n.Exp {
		return refuse(CodeGrantNote, "note.payload.exp", fmt.Sprintf("the note expired at %s (06 §2.6, §2.9)", time.Unix(n.Exp, 0).UTC().Format(time.RFC3339)))
	}
	if n.Aud != c.Audience {
		return refuse(CodeGrantAudience, "note.payload.aud", fmt.Sprintf("the note is made out to %s, not to this key, %s (06 §2.6)", n.Aud, c.Audience))
	}
	if n.Iss != g.DID {
		return refuse(CodeGrantIssuer, "note.payload.iss", fmt.Sprintf("the note is from %s, not the account the grant names, %s (06 §2.6)", n.Iss, g.DID))
	}
	if c.RecordsOnly && !identity.Covers(identity.CmdRecord, n.Cmd) {
		return refuse(CodeGrantRecordsOnly, "note.payload.cmd", fmt.Sprintf("asked for records only, and the note grants %q, which is not under /record (06 §2.6, §3)", n.Cmd))
	}
	return nil
}

func optionalKey(o *canonical.Object, name, prefix string) ([]byte, error) {
	x, ok := o.Get(name)
	if !ok {
		return nil, nil
	}
	s, isStr := x.(string)
	b, err := b64.Strict().DecodeString(s)
	if !isStr || err != nil {
		return nil, refuse(CodeGrantShape, prefix+name, prefix+name+", when present, is base64url (no padding) (06 §2.5)")
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

func stringList(v any, max int) ([]string, bool) {
	l, ok := v.([]any)
	if !ok || len(l) > max {
		return nil, false
	}
	out := make([]string, len(l))
	for i, e := range l {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

func stringsValue(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}
