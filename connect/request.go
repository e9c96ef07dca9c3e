package connect

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/space"
)

// The access a request asks for (06 §2.4).
const (
	AccessRead  = "read"  // only to look
	AccessWrite = "write" // to change the spaces given
	AccessCarry = "carry" // a carrier (§4.3)
)

// The scope of a request (06 §2.4, §2.8).
const (
	ScopeSpaces  = "spaces"  // the spaces the person picks and any made for the app (the default)
	ScopeAccount = "account" // every space, the account's list, making and joining spaces
)

// Limits of a request (06 §2.4).
const (
	MaxNameLen   = 80  // characters of a name an app or a space gives itself
	MaxCreate    = 8   // spaces a request asks the home to make
	MinDays      = 1   // a note's shortest lifetime asked for
	MaxDays      = 365 // and longest
	DefaultDays  = 7   // when neither the person nor the request says
	MaxProofLen  = 200 // characters of a proof handed over a code (§3); an ES256 proof is 86
	requestV     = 1
	didKeyPrefix = "did:key:"
)

// ConnectRequest is what an app asks its account home for (06 §2.4), or
// what a home makes itself for a program that reached it over a code (§3).
// One returned by [ParseConnectRequest] or [NewCodeRequest] is valid as
// §2.4 says; whether the home grants it is [Home.Connect]'s question.
type ConnectRequest struct {
	Audience string // did:key of the app's (or the program's) own key
	Proof    string // base64url ES256 by Audience over the statement of §2.4
	Name     string // what the app calls itself: shown, never trusted
	Access   string // AccessRead, AccessWrite or AccessCarry
	Scope    string // ScopeSpaces (also when absent) or ScopeAccount
	Create   []NewSpace
	Contacts bool
	// ChooseSpaces is whether to offer the person's existing spaces
	// (default true); it changes nothing but the home's page.
	ChooseSpaces bool
	RecordsOnly  bool
	// Via is "" for an app's own request, ViaCode for one the home made
	// for a program's key (§3).
	Via  string
	Days int // 0 when absent
}

// NewSpace is a space a request asks the home to make for the app (06
// §2.4): a name of 1–80 characters, its visibility and, if given, founding
// roles valid as a genesis's (03 §2.1; docs/spaces.md).
type NewSpace struct {
	Name       string
	Visibility string // space.VisibilityPublic or space.VisibilityPrivate
	Roles      map[string][]space.Grant
	roles      any // as read, for Value
}

// Value is the space as JSON: {name, visibility, roles?}.
func (n NewSpace) Value() *canonical.Object {
	o := canonical.NewObject("name", n.Name, "visibility", n.Visibility)
	if n.roles != nil {
		o.Set("roles", n.roles)
	}
	return o
}

var requestMembers = []string{"v", "audience", "proof", "name", "access", "scope", "create", "contacts", "chooseSpaces", "recordsOnly", "via", "days"}

// ParseConnectRequest reads a request an app sent (06 §2.3 step 3) from
// its JSON text. See [DecodeConnectRequest].
func ParseConnectRequest(data []byte) (*ConnectRequest, error) {
	v, err := canonical.Parse(data)
	if err != nil {
		return nil, refuse(CodeRequestShape, "", "not JSON: "+err.Error())
	}
	return DecodeConnectRequest(v)
}

// DecodeConnectRequest reads a request an app sent, as a value of
// canonical's model, and refuses it unless (06 §2.4): it has no member but
// v, audience, proof, name, access, scope, create, contacts, chooseSpaces,
// recordsOnly, via and days; v is 1; audience is a string starting
// did:key:; proof is a string; access is read, write or carry; scope,
// name, contacts, create and days are absent or valid; chooseSpaces and
// recordsOnly are absent or booleans; with recordsOnly, access is not
// carry, create is absent and contacts is not true; and via is absent, since
// a request with via comes only from the home itself. A refusal is a
// *Refusal; the home answers minca:denied saying it did not understand.
func DecodeConnectRequest(v any) (*ConnectRequest, error) {
	o, ok := v.(*canonical.Object)
	if !ok {
		return nil, refuse(CodeRequestShape, "", "a ConnectRequest is a JSON object (06 §2.4)")
	}
	for _, m := range o.Members {
		if !slices.Contains(requestMembers, m.Name) {
			return nil, refuse(CodeRequestShape, m.Name, "a ConnectRequest has no member "+strconv.Quote(m.Name)+" (06 §2.4: no member but those in the table)")
		}
	}
	r := &ConnectRequest{Scope: ScopeSpaces, ChooseSpaces: true}
	if ver, ok := o.Get("v"); !ok || ver != float64(requestV) {
		return nil, refuse(CodeRequestVersion, "v", "v is 1 (06 §2.4)")
	}
	var err error
	if r.Audience, err = reqString(o, "audience", true); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(r.Audience, didKeyPrefix) {
		return nil, refuse(CodeRequestAudience, "audience", "audience starts with did:key: (06 §2.4)")
	}
	if r.Proof, err = reqString(o, "proof", true); err != nil {
		return nil, err
	}
	if r.Access, err = reqString(o, "access", true); err != nil {
		return nil, err
	}
	if r.Access != AccessRead && r.Access != AccessWrite && r.Access != AccessCarry {
		return nil, refuse(CodeRequestAccess, "access", `access is "read", "write" or "carry" (06 §2.4)`)
	}
	if o.Has("scope") {
		s, _ := o.Get("scope")
		if s != ScopeSpaces && s != ScopeAccount {
			return nil, refuse(CodeRequestScope, "scope", `scope, when present, is "spaces" or "account" (06 §2.4)`)
		}
		r.Scope = s.(string)
	}
	if o.Has("name") {
		s, _ := o.Get("name")
		n, ok := s.(string)
		if !ok || canonical.UTF16Len(n) > MaxNameLen {
			return nil, refuse(CodeRequestName, "name", "name, when present, is a string of at most 80 characters (06 §2.4)")
		}
		r.Name = n
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{"contacts", &r.Contacts}, {"chooseSpaces", &r.ChooseSpaces}, {"recordsOnly", &r.RecordsOnly}} {
		if val, ok := o.Get(b.name); ok {
			bv, isBool := val.(bool)
			if !isBool {
				return nil, refuse(CodeRequestShape, b.name, b.name+", when present, is a boolean (06 §2.4)")
			}
			*b.dst = bv
		}
	}
	if val, ok := o.Get("create"); ok {
		if r.Create, err = readCreate(val); err != nil {
			return nil, err
		}
	}
	if val, ok := o.Get("days"); ok {
		f, isNum := val.(float64)
		if !isNum || f != math.Trunc(f) || f < MinDays || f > MaxDays {
			return nil, refuse(CodeRequestDays, "days", "days, when present, is an integer 1–365 (06 §2.4)")
		}
		r.Days = int(f)
	}
	if r.RecordsOnly {
		switch {
		case r.Access == AccessCarry:
			return nil, refuse(CodeRequestRecordsOnly, "recordsOnly", "recordsOnly with access carry: a carrier holds no note (06 §2.4)")
		case o.Has("create"):
			return nil, refuse(CodeRequestRecordsOnly, "create", "recordsOnly with create: a records-only note makes no spaces (06 §2.4)")
		case r.Contacts:
			return nil, refuse(CodeRequestRecordsOnly, "contacts", "recordsOnly with contacts: true (06 §2.4)")
		}
	}
	if o.Has("via") {
		return nil, refuse(CodeRequestVia, "via", "a request with via comes only from the home itself, never from an app (06 §2.4, §3)")
	}
	return r, nil
}

// NewCodeRequest is the request a home makes for a program whose code:ask
// opened (06 §3): audience the ask's did, proof its proof, via code,
// recordsOnly, access write, scope account; name the program's, as a name
// only. days is the home's choice, 0 for the default. The proof is checked
// when the home grants it ([Home.Connect]), against the home's own origin.
func NewCodeRequest(did, proof, name string, days int) (*ConnectRequest, error) {
	if !strings.HasPrefix(did, didKeyPrefix) {
		return nil, refuse(CodeRequestAudience, "did", "the program's did starts with did:key: (06 §3)")
	}
	if len(proof) > MaxProofLen {
		return nil, refuse(CodeRequestShape, "proof", "a proof is at most 200 characters (06 §3)")
	}
	if canonical.UTF16Len(name) > MaxNameLen {
		return nil, refuse(CodeRequestName, "name", "the program's name is at most 80 characters (06 §3)")
	}
	if days != 0 && (days < MinDays || days > MaxDays) {
		return nil, refuse(CodeRequestDays, "days", "days is an integer 1–365 (06 §2.4)")
	}
	return &ConnectRequest{Audience: did, Proof: proof, Name: name, Access: AccessWrite, Scope: ScopeAccount,
		ChooseSpaces: true, RecordsOnly: true, Via: ViaCode, Days: days}, nil
}

// KeyProof is what the request's proof must prove, at the home whose
// origin is homeOrigin (06 §2.5: with via code, naming the home's own
// origin).
func (r *ConnectRequest) KeyProof(homeOrigin string) KeyProof {
	p := KeyProof{Audience: r.Audience, RecordsOnly: r.RecordsOnly}
	if r.Via == ViaCode {
		p.Origin = homeOrigin
	}
	return p
}

// Value is the request as JSON, members absent where they were: what an
// app posts as request in {type: "minca:request", request}.
func (r *ConnectRequest) Value() *canonical.Object {
	o := canonical.NewObject("v", float64(requestV), "audience", r.Audience, "proof", r.Proof)
	if r.Name != "" {
		o.Set("name", r.Name)
	}
	o.Set("access", r.Access)
	if r.Scope != ScopeSpaces {
		o.Set("scope", r.Scope)
	}
	if r.Create != nil {
		l := make([]any, len(r.Create))
		for i, n := range r.Create {
			l[i] = n.Value()
		}
		o.Set("create", l)
	}
	if r.Contacts {
		o.Set("contacts", true)
	}
	if !r.ChooseSpaces {
		o.Set("chooseSpaces", false)
	}
	if r.RecordsOnly {
		o.Set("recordsOnly", true)
	}
	if r.Via != "" {
		o.Set("via", r.Via)
	}
	if r.Days != 0 {
		o.Set("days", float64(r.Days))
	}
	return o
}

func readCreate(v any) ([]NewSpace, error) {
	l, ok := v.([]any)
	if !ok || len(l) > MaxCreate {
		return nil, refuse(CodeRequestCreate, "create", "create is a list of at most 8 NewSpace (06 §2.4)")
	}
	out := make([]NewSpace, 0, len(l))
	for i, e := range l {
		at := "create[" + strconv.Itoa(i) + "]"
		o, ok := e.(*canonical.Object)
		if !ok {
			return nil, refuse(CodeRequestCreate, at, "a NewSpace is an object {name, visibility, roles?} (06 §2.4)")
		}
		var n NewSpace
		for _, m := range o.Members {
			switch m.Name {
			case "name":
				s, ok := m.Value.(string)
				if !ok || s == "" || canonical.UTF16Len(s) > MaxNameLen {
					return nil, refuse(CodeRequestCreate, at+".name", "a new space's name is a non-empty string of at most 80 characters (06 §2.4)")
				}
				n.Name = s
			case "visibility":
				if m.Value != space.VisibilityPublic && m.Value != space.VisibilityPrivate {
					return nil, refuse(CodeRequestCreate, at+".visibility", `a new space's visibility is "public" or "private" (06 §2.4)`)
				}
				n.Visibility = m.Value.(string)
			case "roles":
				roles, err := space.ParseRoles(m.Value, at+".roles")
				if err != nil {
					return nil, refuse(CodeRequestCreate, at+".roles", "a new space's founding roles are valid as a genesis's (06 §2.4, 03 §2.1): "+err.Error())
				}
				n.Roles, n.roles = roles, m.Value
			default:
				return nil, refuse(CodeRequestCreate, at+"."+m.Name, "a NewSpace has no member "+strconv.Quote(m.Name)+" (06 §2.4)")
			}
		}
		if n.Name == "" || n.Visibility == "" {
			return nil, refuse(CodeRequestCreate, at, "a NewSpace has a name and a visibility (06 §2.4)")
		}
		out = append(out, n)
	}
	return out, nil
}

func reqString(o *canonical.Object, name string, required bool) (string, error) {
	v, ok := o.Get(name)
	if !ok {
		if required {
			return "", refuse(CodeRequestShape, name, name+" is missing (06 §2.4)")
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", refuse(CodeRequestShape, name, name+" is a string (06 §2.4)")
	}
	return s, nil
}
