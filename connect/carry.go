package connect

import (
	"slices"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/space"
)

// CarryGrant is what the home answers a carrier's request with (06 §4.3):
// the account, its carry space and a view-only invite to it, where the
// account's data lives when it has a pod, and the relays the home uses. A
// carry connection has no note and no expiry.
type CarryGrant struct {
	DID    string // the account
	Name   string // the account's name
	Space  string // the carry space (carry.space)
	Invite string // a view-only invite to it (carry.invite)
	Pod    *Pod   // nil when the account lives in the home's browser storage (pod: null)
	Relays []string
}

// Pod is where the account's stores live (06 §4.3).
type Pod struct {
	DataPath string
	Folder   string
}

// carryV is a CarryGrant's v.
const carryV = 1

// Value is the carry grant as JSON: {v: 1, kind: "carry", did, name,
// carry: {space, invite}, pod, relays?}.
func (g *CarryGrant) Value() *canonical.Object {
	var pod any
	if g.Pod != nil {
		pod = canonical.NewObject("dataPath", g.Pod.DataPath, "folder", g.Pod.Folder)
	}
	o := canonical.NewObject("v", float64(carryV), "kind", "carry", "did", g.DID, "name", g.Name,
		"carry", canonical.NewObject("space", g.Space, "invite", g.Invite), "pod", pod)
	if g.Relays != nil {
		o.Set("relays", stringsValue(g.Relays))
	}
	return o
}

// ParseCarryGrant reads a carry grant from JSON text. See
// [DecodeCarryGrant].
func ParseCarryGrant(data []byte) (*CarryGrant, error) {
	v, err := canonical.Parse(data)
	if err != nil {
		return nil, refuse(CodeCarryShape, "", "not JSON: "+err.Error())
	}
	return DecodeCarryGrant(v)
}

// DecodeCarryGrant reads a carry grant (06 §4.3): kind "carry" (else
// carry/kind), v 1, did and name strings, carry {space, invite} strings,
// pod null or {dataPath, folder} strings, relays absent or a list of
// strings. Other members are ignored, as in a grant. Whether the carrier
// may use it is [CheckCarryGrant].
func DecodeCarryGrant(v any) (*CarryGrant, error) {
	o, ok := v.(*canonical.Object)
	if !ok {
		return nil, refuse(CodeCarryShape, "", "a CarryGrant is a JSON object (06 §4.3)")
	}
	if k, _ := o.Get("kind"); k != "carry" {
		return nil, refuse(CodeCarryKind, "kind", `a carrier checks that kind is "carry" (06 §4.3)`)
	}
	bad := func(field, msg string) (*CarryGrant, error) {
		return nil, refuse(CodeCarryShape, field, msg+" (06 §4.3)")
	}
	if ver, _ := o.Get("v"); ver != float64(carryV) {
		return bad("v", "v is 1")
	}
	g := &CarryGrant{}
	c, _ := o.Get("carry")
	co, ok := c.(*canonical.Object)
	if !ok {
		return bad("carry", "carry is an object {space, invite}")
	}
	for _, f := range []struct {
		o     *canonical.Object
		field string
		name  string
		dst   *string
	}{{o, "did", "did", &g.DID}, {o, "name", "name", &g.Name}, {co, "carry.space", "space", &g.Space}, {co, "carry.invite", "invite", &g.Invite}} {
		x, _ := f.o.Get(f.name)
		s, ok := x.(string)
		if !ok {
			return bad(f.field, f.field+" is a string")
		}
		*f.dst = s
	}
	pv, ok := o.Get("pod")
	if !ok {
		return bad("pod", "pod is an object {dataPath, folder}, or null")
	}
	if pv != nil {
		po, ok := pv.(*canonical.Object)
		if !ok {
			return bad("pod", "pod is an object {dataPath, folder}, or null")
		}
		g.Pod = &Pod{}
		for _, f := range []struct {
			name string
			dst  *string
		}{{"dataPath", &g.Pod.DataPath}, {"folder", &g.Pod.Folder}} {
			x, _ := po.Get(f.name)
			s, ok := x.(string)
			if !ok {
				return bad("pod."+f.name, "pod."+f.name+" is a string")
			}
			*f.dst = s
		}
	}
	if x, ok := o.Get("relays"); ok {
		if g.Relays, ok = stringList(x, MaxGrantRelays); !ok {
			return bad("relays", "relays, when present, is a list of at most 64 strings")
		}
	}
	return g, nil
}

// CarryInvite is what a carrier reads from a carry grant's invite: the
// space it is to, that space's genesis, and whether it carries the space's
// key. The invite's format is the node's (and, for the key, private
// spaces'); the carrier hands CheckCarryGrant a reader for it.
type CarryInvite struct {
	Space   string
	Genesis *space.Genesis
	HasKey  bool
}

// InviteReader reads an invite's text.
type InviteReader func(invite string) (CarryInvite, error)

// CheckCarryGrant makes the checks a carrier MUST make of a carry grant
// (06 §4.3): the invite is to the named space (its genesis hashing to that
// id); the space is private, with g.DID its one founder and no roles; the
// invite carries its key; and pod.dataPath has no empty or ".." segment.
// (kind is checked by decoding.) A refusal is a *Refusal.
func CheckCarryGrant(g *CarryGrant, read InviteReader) error {
	inv, err := read(g.Invite)
	if err != nil {
		return refuse(CodeCarryInvite, "carry.invite", "the invite does not read: "+err.Error()+" (06 §4.3)")
	}
	if inv.Genesis == nil || inv.Space != g.Space || inv.Genesis.ID != g.Space {
		return refuse(CodeCarryInvite, "carry.invite", "the invite is not to the carry space the grant names, "+g.Space+" (06 §4.3)")
	}
	gen := inv.Genesis
	switch {
	case !gen.Private():
		return refuse(CodeCarrySpace, "carry.space", "the carry space is not private (06 §4.3)")
	case !slices.Equal(gen.Founders, []string{g.DID}):
		return refuse(CodeCarrySpace, "carry.space", "the carry space's one founder is not the account, "+g.DID+" (06 §4.3)")
	case len(gen.Roles) > 0:
		return refuse(CodeCarrySpace, "carry.space", "the carry space assigns roles; it has none (06 §4.3, 03 §1.1)")
	}
	if !inv.HasKey {
		return refuse(CodeCarryInvite, "carry.invite", "the invite does not carry the carry space's key (06 §4.3)")
	}
	if g.Pod != nil {
		for _, seg := range strings.Split(g.Pod.DataPath, "/") {
			if seg == "" || seg == ".." {
				return refuse(CodeCarryPod, "pod.dataPath", "pod.dataPath has an empty or \"..\" segment (06 §4.3)")
			}
		}
	}
	return nil
}
