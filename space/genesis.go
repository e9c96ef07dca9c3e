package space

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// Limits of a genesis (docs/spaces.md, Genesis).
const (
	MaxNameLen        = 80  // characters of a space's name
	MaxFounders       = 16  // founders a genesis names
	MaxRoles          = 64  // roles a genesis or the history defines at once
	MaxGrants         = 64  // grants one role holds
	MaxNonceLen       = 64  // characters of a genesis's nonce
	MaxKeyIDLen       = 128 // characters of encryptionKeyId
	GenesisVersion    = 1   // the v every genesis of this profile has
	VisibilityPublic  = "public"
	VisibilityPrivate = "private"
)

// Genesis is a space's constitution (DESIGN.md, Spaces; docs/spaces.md):
// what the space is before any access change. The space's id is the content
// id (02 §2) of its canonical form. A Genesis returned by [ParseGenesis] or
// [NewGenesis] is valid and immutable.
type Genesis struct {
	ID         string
	Name       string
	Visibility string   // "public" or "private"
	Founders   []string // root DIDs, in the order given
	// Roles are the roles the space starts with, by name.
	Roles     map[string][]Grant
	CreatedAt string
	Nonce     string
	// Account is true for a space that admits only its one founder, the
	// account itself (an account registry, a contacts or carry space, 06
	// §1.3): every version needs a note granting /account/write.
	Account bool
	// EncryptionKeyID names a private space's first key K₀ (02 §7.3).
	EncryptionKeyID string

	obj       *canonical.Object
	canonical []byte
	digest    canonical.ID // the digest ID names
}

// Digest is the digest the space's id names: the id the store keys by.
func (g *Genesis) Digest() canonical.ID { return g.digest }

// Private reports whether the space is private.
func (g *Genesis) Private() bool { return g.Visibility == VisibilityPrivate }

// IsFounder reports whether root is one of the genesis's founders.
func (g *Genesis) IsFounder(root string) bool { return slices.Contains(g.Founders, root) }

// Canonical returns the genesis's canonical JSON, the bytes its id hashes.
func (g *Genesis) Canonical() []byte { return slices.Clone(g.canonical) }

// Object returns the genesis as a JSON object. It must not be changed.
func (g *Genesis) Object() *canonical.Object { return g.obj }

// GenesisOptions say what a new genesis holds (docs/spaces.md, Genesis).
type GenesisOptions struct {
	Name      string
	Private   bool
	Founders  []string           // at least one root DID
	Roles     map[string][]Grant // optional
	CreatedAt string             // ISO 8601; required
	Nonce     string             // required: makes two spaces of one name two ids
	Account   bool
	// EncryptionKeyID is a private space's K₀ id; optional.
	EncryptionKeyID string
}

// NewGenesis builds a genesis and checks it as [ParseGenesis] does.
func NewGenesis(o GenesisOptions) (*Genesis, error) {
	vis := VisibilityPublic
	if o.Private {
		vis = VisibilityPrivate
	}
	founders := make([]any, len(o.Founders))
	for i, f := range o.Founders {
		founders[i] = f
	}
	obj := canonical.NewObject("v", float64(GenesisVersion), "name", o.Name, "visibility", vis,
		"founders", founders, "createdAt", o.CreatedAt, "nonce", o.Nonce)
	if len(o.Roles) > 0 {
		roles := &canonical.Object{}
		names := make([]string, 0, len(o.Roles))
		for n := range o.Roles {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			gs := make([]any, len(o.Roles[n]))
			for i, g := range o.Roles[n] {
				gs[i] = g.Value()
			}
			roles.Set(n, canonical.NewObject("grants", gs))
		}
		obj.Set("roles", roles)
	}
	if o.Account {
		obj.Set("account", true)
	}
	if o.EncryptionKeyID != "" {
		obj.Set("encryptionKeyId", o.EncryptionKeyID)
	}
	return GenesisFromValue(obj)
}

// ParseGenesis reads a genesis from JSON text and checks it.
func ParseGenesis(data []byte) (*Genesis, error) {
	v, err := canonical.Parse(data)
	if err != nil {
		return nil, refuse(CodeGenesisShape, "", "a genesis is a JSON object: "+err.Error())
	}
	return GenesisFromValue(v)
}

// ParseGenesisFor reads a genesis handed over for space id (in an invite, a
// pass, a command) and checks that it is that space's: its content id must
// be id (docs/spaces.md, How a peer gets the genesis).
func ParseGenesisFor(id string, data []byte) (*Genesis, error) {
	g, err := ParseGenesis(data)
	if err != nil {
		return nil, err
	}
	if g.ID != id {
		return nil, refuse(CodeGenesisID, "", "the genesis hashes to "+g.ID+", not the space id "+id)
	}
	return g, nil
}

// GenesisFromValue is [ParseGenesis] for a value already read; it keeps v.
func GenesisFromValue(v any) (*Genesis, error) {
	o, ok := v.(*canonical.Object)
	if !ok {
		return nil, refuse(CodeGenesisShape, "", "a genesis is a JSON object")
	}
	g := &Genesis{obj: o, Roles: map[string][]Grant{}}
	bad := func(field, msg string) (*Genesis, error) {
		return nil, refuse(CodeGenesisShape, field, msg+" (docs/spaces.md, Genesis)")
	}
	var hasV, hasName, hasVis, hasFounders, hasCreated, hasNonce bool
	for _, m := range o.Members {
		switch m.Name {
		case "v":
			if m.Value != float64(GenesisVersion) {
				return bad("v", "v is 1")
			}
			hasV = true
		case "name":
			s, ok := m.Value.(string)
			if !ok || s == "" || canonical.UTF16Len(s) > MaxNameLen {
				return bad("name", "name is a string of 1–80 characters")
			}
			g.Name, hasName = s, true
		case "visibility":
			s, _ := m.Value.(string)
			if s != VisibilityPublic && s != VisibilityPrivate {
				return bad("visibility", `visibility is "public" or "private"`)
			}
			g.Visibility, hasVis = s, true
		case "founders":
			arr, ok := m.Value.([]any)
			if !ok || len(arr) == 0 || len(arr) > MaxFounders {
				return bad("founders", "founders is a list of 1–16 root DIDs")
			}
			for i, e := range arr {
				s, ok := e.(string)
				if !ok {
					return bad("founders["+strconv.Itoa(i)+"]", "a founder is a did:key")
				}
				if _, err := identity.ParseDID(s); err != nil {
					return bad("founders["+strconv.Itoa(i)+"]", "a founder is a P-256 did:key: "+err.Error())
				}
				if slices.Contains(g.Founders, s) {
					return bad("founders["+strconv.Itoa(i)+"]", "a founder is named once")
				}
				g.Founders = append(g.Founders, s)
			}
			hasFounders = true
		case "roles":
			roles, err := ParseRoles(m.Value, "roles")
			if err != nil {
				return nil, err
			}
			g.Roles = roles
		case "createdAt":
			s, ok := m.Value.(string)
			if !ok {
				return bad("createdAt", "createdAt is an ISO 8601 time")
			}
			if _, err := record.ParseTime(s); err != nil {
				return bad("createdAt", "createdAt is an ISO 8601 time: "+err.Error())
			}
			g.CreatedAt, hasCreated = s, true
		case "nonce":
			s, ok := m.Value.(string)
			if !ok || s == "" || canonical.UTF16Len(s) > MaxNonceLen {
				return bad("nonce", "nonce is a string of 1–64 characters")
			}
			g.Nonce, hasNonce = s, true
		case "account":
			if m.Value != true {
				return bad("account", "account, if present, is true")
			}
			g.Account = true
		case "encryptionKeyId":
			s, ok := m.Value.(string)
			if !ok || s == "" || canonical.UTF16Len(s) > MaxKeyIDLen {
				return bad("encryptionKeyId", "encryptionKeyId is a string of 1–128 characters")
			}
			g.EncryptionKeyID = s
		default:
			return bad(m.Name, "a genesis has no member "+strconv.Quote(m.Name))
		}
	}
	switch {
	case !hasV:
		return bad("v", "v is required")
	case !hasName:
		return bad("name", "name is required")
	case !hasVis:
		return bad("visibility", "visibility is required")
	case !hasFounders:
		return bad("founders", "founders is required")
	case !hasCreated:
		return bad("createdAt", "createdAt is required")
	case !hasNonce:
		return bad("nonce", "nonce is required")
	case g.EncryptionKeyID != "" && !g.Private():
		return bad("encryptionKeyId", "only a private space names a key")
	case g.Account && (len(g.Founders) != 1 || len(g.Roles) > 0):
		return bad("account", "a space that admits only the account names one founder and no roles")
	}
	b, err := canonical.Marshal(o)
	if err != nil {
		return bad("", "the genesis has no canonical form: "+err.Error())
	}
	g.canonical = b
	g.digest = canonical.IDOf(b)
	g.ID = g.digest.String()
	return g, nil
}

// ValidRoleName reports whether s is a role name: ^[a-z][a-zA-Z0-9]{0,39}$,
// the pattern 02 §10 gives permission names.
func ValidRoleName(s string) bool {
	if len(s) < 1 || len(s) > 40 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ParseRoles reads founding roles as a genesis holds them: an object of at
// most 64 roles by name, each {grants: [Grant…]} (docs/spaces.md, Genesis).
// field names the value in refusals. 06 §2.4's NewSpace holds the same.
func ParseRoles(v any, field string) (map[string][]Grant, error) {
	ro, ok := v.(*canonical.Object)
	if !ok || ro.Len() > MaxRoles {
		return nil, refuse(CodeGenesisShape, field, "roles is an object of at most 64 roles by name (docs/spaces.md, Genesis)")
	}
	roles := make(map[string][]Grant, ro.Len())
	for _, r := range ro.Members {
		if !ValidRoleName(r.Name) {
			return nil, refuse(CodeGenesisShape, field+"."+r.Name, "a role name matches ^[a-z][a-zA-Z0-9]{0,39}$ (docs/spaces.md, Genesis)")
		}
		gs, err := parseRoleBody(r.Value, field+"."+r.Name)
		if err != nil {
			return nil, err
		}
		roles[r.Name] = gs
	}
	return roles, nil
}

// parseRoleBody reads {grants: [Grant…]}, a role as the genesis and
// sys.role hold it.
func parseRoleBody(v any, field string) ([]Grant, error) {
	o, ok := v.(*canonical.Object)
	if !ok {
		return nil, refuse(CodeGenesisShape, field, "a role is an object {grants} (docs/spaces.md)")
	}
	for _, m := range o.Members {
		if m.Name != "grants" {
			return nil, refuse(CodeGenesisShape, field+"."+m.Name, "a role has no member "+strconv.Quote(m.Name)+" (docs/spaces.md)")
		}
	}
	gv, _ := o.Get("grants")
	return parseGrants(gv, field+".grants", CodeGenesisShape)
}

// String is the genesis's id and name, for messages.
func (g *Genesis) String() string { return fmt.Sprintf("%s (%q)", g.ID, g.Name) }
