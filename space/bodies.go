package space

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// The body and key formats of the access collections (docs/spaces.md §4):
// one reader a collection.

func bodyObject(v *record.Version, members ...string) (*canonical.Object, error) {
	o, ok := v.Body.(*canonical.Object)
	if !ok {
		return nil, refuse(CodeAccessBody, "body", "a "+v.Collection+" body is an object (docs/spaces.md)")
	}
	for _, m := range o.Members {
		if !slices.Contains(members, m.Name) {
			return nil, refuse(CodeAccessBody, "body."+m.Name, "a "+v.Collection+" body has no member "+strconv.Quote(m.Name)+" (docs/spaces.md)")
		}
	}
	return o, nil
}

func didMember(o *canonical.Object, name, coll string) (string, error) {
	v, _ := o.Get(name)
	s, ok := v.(string)
	if !ok {
		return "", refuse(CodeAccessBody, "body."+name, "a "+coll+" body's "+name+" is a did:key (docs/spaces.md)")
	}
	if _, err := identity.ParseDID(s); err != nil {
		return "", refuse(CodeAccessBody, "body."+name, "a "+coll+" body's "+name+" is a P-256 did:key: "+err.Error())
	}
	return s, nil
}

func wantKey(v *record.Version, want string) error {
	if v.Key != want {
		return refuse(CodeAccessKey, "key", "the key of this "+v.Collection+" change is "+strconv.Quote(want)+", not "+strconv.Quote(v.Key)+" (docs/spaces.md)")
	}
	return nil
}

func readRoleList(v any, field, coll string) ([]string, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) > MaxRoles {
		return nil, refuse(CodeAccessBody, field, "a "+coll+" body's roles is a list of at most 64 role names (docs/spaces.md)")
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok || !ValidRoleName(s) {
			return nil, refuse(CodeAccessBody, field+"["+strconv.Itoa(i)+"]", "a role name matches ^[a-z][a-zA-Z0-9]{0,39}$")
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// sys.role, key role:<name>: {name, grants}; a delete removes the role.
func (c *Change) readRole(v *record.Version) error {
	name, ok := strings.CutPrefix(v.Key, "role:")
	if !ok || !ValidRoleName(name) {
		return refuse(CodeAccessKey, "key", "a sys.role key is role:<name>, the name matching ^[a-z][a-zA-Z0-9]{0,39}$ (docs/spaces.md)")
	}
	c.RoleName, c.Register = name, "role:"+name
	if v.Deleted {
		return nil
	}
	o, err := bodyObject(v, "name", "grants", "keep")
	if err != nil {
		return err
	}
	if c.Keep, err = readKeep(o); err != nil {
		return err
	}
	if n, _ := o.Get("name"); n != name {
		return refuse(CodeAccessKey, "body.name", "a sys.role body's name is the role its key names, "+strconv.Quote(name))
	}
	gv, ok := o.Get("grants")
	if !ok {
		return refuse(CodeAccessBody, "body.grants", "a sys.role body lists its grants")
	}
	c.Grants, err = parseGrants(gv, "body.grants", CodeAccessBody)
	return err
}

// MaxKeep bounds the places a keep names: keys times collections.
const MaxKeep = 4096

// readKeep reads an optional keep: {keyDid: {collection: place}}.
func readKeep(o *canonical.Object) (map[string]map[string]int64, error) {
	kv, ok := o.Get("keep")
	if !ok {
		return nil, nil
	}
	ko, isObj := kv.(*canonical.Object)
	if !isObj {
		return nil, refuse(CodeAccessBody, "body.keep", "keep is an object of log places by collection by key (docs/spaces.md)")
	}
	out := make(map[string]map[string]int64, ko.Len())
	n := 0
	for _, k := range ko.Members {
		co, isObj := k.Value.(*canonical.Object)
		if !isObj {
			return nil, refuse(CodeAccessBody, "body.keep", "keep names, for each key, an object of log places by collection")
		}
		if _, err := identity.ParseDID(k.Name); err != nil {
			return nil, refuse(CodeAccessBody, "body.keep", "keep is by key, a P-256 did:key: "+err.Error())
		}
		m := make(map[string]int64, co.Len())
		for _, p := range co.Members {
			f, ok := p.Value.(float64)
			if !ok || f < 0 || f > record.MaxSafeInteger || f != math.Trunc(f) {
				return nil, refuse(CodeAccessBody, "body.keep", "a kept place is a log place, an integer 0 … 2^53 − 1 (02 §4.10)")
			}
			if n++; n > MaxKeep {
				return nil, refuse(CodeAccessBody, "body.keep", "keep names at most 4096 places")
			}
			m[p.Name] = int64(f)
		}
		out[k.Name] = m
	}
	return out, nil
}

// keeps reports whether the change keeps the version of key at place n in
// coll.
func (c *Change) keeps(key, coll string, n int64) bool {
	p, ok := c.Keep[key][coll]
	return ok && n <= p
}

// sys.remove (remove:<owner>), sys.stepdown (stepdown:<owner>), sys.succeed
// (succeed:<owner>): {member} or {founder}.
func (c *Change) readMember(v *record.Version, prefix string) error {
	name := "member"
	members := []string{"member", "keep"}
	if c.Kind == KindStepdown || c.Kind == KindSucceed {
		name, members = "founder", []string{"founder"}
	}
	o, err := bodyObject(v, members...)
	if err != nil {
		return err
	}
	if c.Keep, err = readKeep(o); err != nil {
		return err
	}
	if c.Target, err = didMember(o, name, v.Collection); err != nil {
		return err
	}
	c.Register = "member:" + c.Target
	return wantKey(v, prefix+record.OwnerPart(c.Target))
}

// JoinProof is what an invite's key signs for one member to join by it:
// the canonical JSON of {invite, member, proof: "minca/join/v1", space}
// (docs/spaces.md, sys.assign).
func JoinProof(space, invite, member string) []byte {
	b, _ := canonical.Marshal(canonical.NewObject("invite", invite, "member", member, "proof", "minca/join/v1", "space", space))
	return b
}

// sys.assign, key member:<owner>: {member, roles, invite?: {key, sig}}.
func (c *Change) readAssign(g *Genesis, v *record.Version) error {
	o, err := bodyObject(v, "member", "roles", "invite", "keep")
	if err != nil {
		return err
	}
	if c.Keep, err = readKeep(o); err != nil {
		return err
	}
	if c.Target, err = didMember(o, "member", v.Collection); err != nil {
		return err
	}
	c.Register = "member:" + c.Target
	if err := wantKey(v, "member:"+record.OwnerPart(c.Target)); err != nil {
		return err
	}
	rv, ok := o.Get("roles")
	if !ok {
		return refuse(CodeAccessBody, "body.roles", "a sys.assign body lists the member's roles")
	}
	if c.Roles, err = readRoleList(rv, "body.roles", v.Collection); err != nil {
		return err
	}
	iv, ok := o.Get("invite")
	if !ok {
		return nil
	}
	io, ok := iv.(*canonical.Object)
	if !ok || io.Len() != 2 {
		return refuse(CodeAccessBody, "body.invite", "a join's invite is {key, sig} (docs/spaces.md)")
	}
	if c.Via, err = didMember(io, "key", v.Collection+" invite"); err != nil {
		return err
	}
	sv, _ := io.Get("sig")
	s, _ := sv.(string)
	sig, derr := base64.RawURLEncoding.DecodeString(s)
	pub, perr := identity.ParseDID(c.Via)
	if derr != nil || perr != nil || len(sig) != 64 || !pub.Verify(JoinProof(g.ID, c.Via, c.Target), sig) {
		return refuse(CodeAccessProof, "body.invite.sig", "the invite's key did not sign this join: sig is base64url of its ES256 signature over JoinProof(space, invite, member) (docs/spaces.md)")
	}
	return nil
}

// sys.invite, key invite:<owner of the invite key>: {key, roles}; a delete
// closes it.
func (c *Change) readInvite(v *record.Version) error {
	if v.Deleted {
		rest, ok := strings.CutPrefix(v.Key, "invite:")
		if !ok || len(rest) != record.OwnerPartLen {
			return refuse(CodeAccessKey, "key", "a sys.invite key is invite:<owner part of the invite key> (docs/spaces.md)")
		}
		// The key names the invite only through a hash: the register is
		// the key itself, which every version of the record shares.
		c.Register = "invite:" + rest
		return nil
	}
	o, err := bodyObject(v, "key", "roles")
	if err != nil {
		return err
	}
	if c.Target, err = didMember(o, "key", v.Collection); err != nil {
		return err
	}
	rv, ok := o.Get("roles")
	if !ok {
		return refuse(CodeAccessBody, "body.roles", "a sys.invite body lists the roles it gives")
	}
	if c.Roles, err = readRoleList(rv, "body.roles", v.Collection); err != nil {
		return err
	}
	c.Register = "invite:" + record.OwnerPart(c.Target)
	return wantKey(v, "invite:"+record.OwnerPart(c.Target))
}

// sys.revoke, key revoke:<owner of the key>: {key, root, cutoffs}.
func (c *Change) readRevoke(v *record.Version) error {
	o, err := bodyObject(v, "key", "root", "cutoffs")
	if err != nil {
		return err
	}
	if c.Target, err = didMember(o, "key", v.Collection); err != nil {
		return err
	}
	if c.RevokedRoot, err = didMember(o, "root", v.Collection); err != nil {
		return err
	}
	cv, ok := o.Get("cutoffs")
	co, isObj := cv.(*canonical.Object)
	if !ok || !isObj {
		return refuse(CodeAccessBody, "body.cutoffs", "a sys.revoke body's cutoffs is an object of log places by collection (06 §2.9)")
	}
	c.Cutoffs = make(map[string]int64, co.Len())
	for _, m := range co.Members {
		f, ok := m.Value.(float64)
		if !ok || f < 0 || f > record.MaxSafeInteger || f != math.Trunc(f) {
			return refuse(CodeAccessBody, "body.cutoffs."+m.Name, "a cutoff is a log place, an integer 0 … 2^53 − 1 (02 §4.10, 06 §2.9)")
		}
		c.Cutoffs[m.Name] = int64(f)
	}
	c.Register = "revoke:" + c.Target + "|" + c.RevokedRoot
	return wantKey(v, "revoke:"+record.OwnerPart(c.Target))
}

// sys.collection, key collection:<name>: a definition (02 §6.1) or a delete.
func (c *Change) readDefine(g *Genesis, v *record.Version) error {
	name, ok := strings.CutPrefix(v.Key, collection.KeyPrefix)
	if !ok || name == "" {
		return refuse(CodeAccessKey, "key", "a definition's key is collection:<name> (02 §6.1)")
	}
	c.DefName, c.Register = name, "collection:"+name
	if v.Deleted {
		return nil
	}
	if sealed(v.Body) {
		// A private space seals definitions (02 §6.1); a peer without the
		// key counts the change but can't read it (§6.3).
		c.DefSealed = true
	} else if d, err := collection.ParseDefinitionVersion(v, v.Body); err == nil {
		c.Def = d
	} else {
		c.DefInvalid = strings.TrimPrefix(err.Error(), "minca/collection: invalid definition; ")
	}
	b, err := canonical.Marshal(v.Body)
	if err != nil {
		return refuse(CodeAccessBody, "body", "the body has no canonical form: "+err.Error())
	}
	c.DefCanon = string(b)
	return nil
}

// sealed reports whether a body is a sealed envelope {sealed, keyId} (02
// §3.1; 03 §8.3).
func sealed(body any) bool {
	o, ok := body.(*canonical.Object)
	return ok && o.Len() == 2 && o.Has("sealed") && o.Has("keyId")
}

// sys.key, key key:<keyId>: {keyId, …}: a private space's new key.
func (c *Change) readKey(v *record.Version) error {
	o, ok := v.Body.(*canonical.Object)
	if !ok {
		return refuse(CodeAccessBody, "body", "a sys.key body is an object {keyId, …} (docs/spaces.md)")
	}
	kv, _ := o.Get("keyId")
	s, ok := kv.(string)
	if !ok || s == "" || canonical.UTF16Len(s) > MaxKeyIDLen {
		return refuse(CodeAccessBody, "body.keyId", "a sys.key body names its keyId, 1–128 characters")
	}
	c.KeyID, c.Register = s, "key"
	return wantKey(v, "key:"+s)
}

// sys.relays, key relays: {relays: [url…]}; a delete names none.
func (c *Change) readRelays(v *record.Version) error {
	c.Register = "relays"
	if err := wantKey(v, "relays"); err != nil {
		return err
	}
	if v.Deleted {
		return nil
	}
	o, err := bodyObject(v, "relays")
	if err != nil {
		return err
	}
	rv, _ := o.Get("relays")
	arr, ok := rv.([]any)
	if !ok || len(arr) > MaxRelays {
		return refuse(CodeAccessBody, "body.relays", "relays is a list of at most 8 relay URLs (docs/spaces.md)")
	}
	for i, e := range arr {
		s, ok := e.(string)
		if !ok || len(s) > MaxRelayLen || !(strings.HasPrefix(s, "wss://") || strings.HasPrefix(s, "ws://")) || slices.Contains(c.Relays, s) {
			return refuse(CodeAccessBody, "body.relays["+strconv.Itoa(i)+"]", "a relay is a distinct ws:// or wss:// URL of at most 200 characters")
		}
		c.Relays = append(c.Relays, s)
	}
	return nil
}

// sys.keepers, key keepers: {keepers: [{did, name}…]}; a delete names none.
func (c *Change) readKeepers(v *record.Version) error {
	c.Register = "keepers"
	if err := wantKey(v, "keepers"); err != nil {
		return err
	}
	if v.Deleted {
		return nil
	}
	o, err := bodyObject(v, "keepers")
	if err != nil {
		return err
	}
	kv, _ := o.Get("keepers")
	arr, ok := kv.([]any)
	if !ok || len(arr) > MaxKeepers {
		return refuse(CodeAccessBody, "body.keepers", "keepers is a list of at most 16 {did, name} (06 §4.2)")
	}
	for i, e := range arr {
		field := "body.keepers[" + strconv.Itoa(i) + "]"
		ko, ok := e.(*canonical.Object)
		if !ok || ko.Len() != 2 {
			return refuse(CodeAccessBody, field, "a keeper is {did, name} (06 §4.2)")
		}
		did, err := didMember(ko, "did", v.Collection)
		if err != nil {
			return err
		}
		nv, _ := ko.Get("name")
		name, ok := nv.(string)
		if !ok || canonical.UTF16Len(name) > MaxNameText {
			return refuse(CodeAccessBody, field+".name", "a keeper's name is a string of at most 80 characters")
		}
		for _, k := range c.Keepers {
			if k.DID == did {
				return refuse(CodeAccessBody, field+".did", "a keeper is named once")
			}
		}
		c.Keepers = append(c.Keepers, Keeper{DID: did, Name: name})
	}
	return nil
}

// LineTag names a writer's line in a fork's key: 26 characters of
// base32(SHA-256("minca/fork/v1|" ‖ author ‖ "\n" ‖ collection)).
func LineTag(author, coll string) string {
	sum := sha256.Sum256([]byte("minca/fork/v1|" + author + "\n" + coll))
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

// sys.fork, key fork:<line tag>: {proof: {kind, versions: [A, B]}} (02
// §4.10; record.LineProof).
func (c *Change) readFork(g *Genesis, v *record.Version, env Env) error {
	o, err := bodyObject(v, "proof")
	if err != nil {
		return err
	}
	pv, _ := o.Get("proof")
	vf := env.Verifier
	if vf == nil {
		vf = &record.Verifier{}
	}
	p, err := record.ParseLineProof(pv, vf)
	if err != nil {
		return refuse(CodeAccessProof, "body.proof", "the proof does not show a fork or break: "+err.Error()+" (02 §4.10)")
	}
	line := p.Line()
	if line.Space != g.ID {
		return refuse(CodeAccessProof, "body.proof", "the proof is of a line in another space")
	}
	c.ForkAuthor, c.ForkCollection, c.ForkFrom = line.Author, line.Collection, p.From()
	for _, pv := range []*record.Version{p.A, p.B} {
		if pv.Proof == nil {
			c.ForkRoots = append(c.ForkRoots, pv.Author)
			continue
		}
		if env.Notes == nil {
			return refuse(record.CodeNoProof, "body.proof", "no note checker to find whose line it is")
		}
		root, err := env.Notes.CheckNote(pv.Proof, pv.Author, nil, nil)
		if err != nil {
			return refuse(CodeAccessProof, "body.proof", "a version of the proof carries a note that is not valid: "+err.Error())
		}
		c.ForkRoots = append(c.ForkRoots, root)
	}
	slices.Sort(c.ForkRoots)
	c.ForkRoots = slices.Compact(c.ForkRoots)
	c.Register = "fork:" + line.Author + "\n" + line.Collection
	return wantKey(v, "fork:"+LineTag(line.Author, line.Collection))
}
