package space

import (
	"strconv"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// Commands of our profile of 03 (docs/spaces.md, Commands), beside
// identity's /record/… and 02 §6.3's /collection/define. Each access
// collection's changes invoke one; a role's grants name them.
const (
	CmdSpace        = "/space"         // every command below
	CmdRole         = "/space/role"    // sys.role: define, change or delete a role
	CmdAssign       = "/space/assign"  // sys.assign: give a member roles (joining by an invite included)
	CmdRemove       = "/space/remove"  // sys.remove: remove a member (leaving included)
	CmdInvite       = "/space/invite"  // sys.invite: open or close an invite
	CmdRevoke       = "/space/revoke"  // sys.revoke: revoke a key (one's own included)
	CmdKey          = "/space/key"     // sys.key: change a private space's key
	CmdRelays       = "/space/relays"  // sys.relays
	CmdKeepers      = "/space/keepers" // sys.keepers (06 §4.2)
	CmdFork         = "/space/fork"    // sys.fork: prove a writer's line forked
	CmdFounder      = "/space/founder" // sys.stepdown, sys.succeed
	CmdDefine       = identity.CmdCollectionDefine
	CmdAccountWrite = identity.CmdAccountWrite
)

// Grant is one thing a role lets its holders do: a command and a UCAN
// policy over the invocation's arguments (identity's policy language; 02
// §7.1, §9.3). A Grant is immutable.
type Grant struct {
	Cmd string
	Pol []any // the statements as written; [] when absent
	pol *identity.Policy
	key string // canonical {cmd, pol}: two grants are the same when their keys are
}

// NewGrant makes a grant, checking cmd and pol as a role's are checked.
func NewGrant(cmd string, pol []any) (Grant, error) {
	if pol == nil {
		pol = []any{}
	}
	return readGrant(canonical.NewObject("cmd", cmd, "pol", pol), "grant", CodeAccessBody)
}

// MustGrant is NewGrant for grants written in code; it panics on a bad one.
func MustGrant(cmd string, pol ...any) Grant {
	g, err := NewGrant(cmd, pol)
	if err != nil {
		panic(err)
	}
	return g
}

// Value is the grant as JSON: {cmd, pol}.
func (g Grant) Value() *canonical.Object {
	return canonical.NewObject("cmd", g.Cmd, "pol", g.Pol)
}

// Key is the grant's canonical JSON: equal keys are the same grant.
func (g Grant) Key() string { return g.key }

// Admits reports whether the grant lets its holder make inv: its command
// covers inv's (01 §8 in our profile) and its policy holds for inv's
// arguments.
func (g Grant) Admits(inv *identity.Invocation) bool {
	return identity.Covers(g.Cmd, inv.Cmd) && g.pol.Holds(inv.Args())
}

// Covers reports whether holding g is at least holding h: g's command
// covers h's, and every statement of g's policy is one of h's (more
// statements only narrow). What a member may give away, it must hold this
// way (docs/spaces.md, Giving no more than one holds).
func (g Grant) Covers(h Grant) bool {
	if !identity.Covers(g.Cmd, h.Cmd) {
		return false
	}
	for _, s := range g.Pol {
		found := false
		for _, t := range h.Pol {
			if canonical.Equal(s, t) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// ParseGrants reads a role's grants written as JSON, [{cmd, pol?}…], as a
// genesis's and a sys.role's are read: at most MaxGrants, each checked, a
// grant given twice kept once. A bad one is a *record.Refusal naming it
// from field (field[i].cmd, …), code CodeAccessBody.
func ParseGrants(v any, field string) ([]Grant, error) {
	return parseGrants(v, field, CodeAccessBody)
}

func parseGrants(v any, field, code string) ([]Grant, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) > MaxGrants {
		return nil, refuse(code, field, "grants is a list of at most 64 {cmd, pol?} (docs/spaces.md)")
	}
	out := make([]Grant, 0, len(arr))
	seen := map[string]bool{}
	for i, e := range arr {
		g, err := readGrant(e, field+"["+strconv.Itoa(i)+"]", code)
		if err != nil {
			return nil, err
		}
		if seen[g.key] {
			continue
		}
		seen[g.key] = true
		out = append(out, g)
	}
	return out, nil
}

func readGrant(v any, field, code string) (Grant, error) {
	o, ok := v.(*canonical.Object)
	if !ok {
		return Grant{}, refuse(code, field, "a grant is an object {cmd, pol?} (docs/spaces.md)")
	}
	var g Grant
	hasCmd := false
	for _, m := range o.Members {
		switch m.Name {
		case "cmd":
			s, ok := m.Value.(string)
			if !ok || identity.CheckCommand(s) != nil {
				return Grant{}, refuse(code, field+".cmd", "cmd is a command: \"/\" or /segment/… in lower case (01 §8 in our profile)")
			}
			g.Cmd, hasCmd = s, true
		case "pol":
			p, err := identity.ParsePolicy(m.Value)
			if err != nil {
				return Grant{}, refuse(code, field+".pol", "pol is a UCAN policy: "+err.Error())
			}
			g.Pol, g.pol = m.Value.([]any), p
		default:
			return Grant{}, refuse(code, field+"."+m.Name, "a grant has no member "+strconv.Quote(m.Name))
		}
	}
	if !hasCmd {
		return Grant{}, refuse(code, field+".cmd", "a grant names its cmd")
	}
	if g.pol == nil {
		g.Pol = []any{}
		g.pol, _ = identity.ParsePolicy(g.Pol)
	}
	b, err := canonical.Marshal(g.Value())
	if err != nil {
		return Grant{}, refuse(code, field, "a grant has no canonical form: "+err.Error())
	}
	g.key = string(b)
	return g, nil
}

// grantSet is what a member holds: every grant (a founder) or a list.
type grantSet struct {
	all    bool
	grants []Grant
}

func (s grantSet) admits(inv *identity.Invocation) bool {
	if s.all {
		return true
	}
	for _, g := range s.grants {
		if g.Admits(inv) {
			return true
		}
	}
	return false
}

// covers reports whether s holds every grant in gs (docs/spaces.md, Giving
// no more than one holds).
func (s grantSet) covers(gs []Grant) (Grant, bool) {
	if s.all {
		return Grant{}, true
	}
	for _, g := range gs {
		ok := false
		for _, h := range s.grants {
			if h.Covers(g) {
				ok = true
				break
			}
		}
		if !ok {
			return g, false
		}
	}
	return Grant{}, true
}
