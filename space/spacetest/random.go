package spacetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// Options shape [Random]. Zero fields take their defaults.
type Options struct {
	Seed     uint64
	Founders int // 1–2 (default: 1 or 2 at random)
	Accounts int // accounts besides the founders (default 5)
	Peers    int // writers' views of the history (default 3)
	Steps    int // actions (default 60)
}

// Space is a random space: its genesis, and every version written, in the
// order written (some of which a peer refuses, or which wait for ever).
type Space struct {
	Genesis  *space.Genesis
	Versions []*record.Version
	// Notes judges the notes the versions carry; share it between runs
	// so each note is verified once.
	Notes *identity.Checker
	// Made names, by id, the versions made to try a judge's corner: "access
	// fork" (two changes at one place of a key's sys.assign line),
	// "readmission" (an admin's assignment of someone removed), "rejoin"
	// (someone removed signing a join by an invite).
	Made map[string]string
}

type signer struct {
	s    identity.Signer
	did  string
	logs map[string]*record.Version
}

type account struct {
	did     string
	root    *identity.PrivateKey
	signers []*signer // the last is in use
}

func (a *account) signer() *signer { return a.signers[len(a.signers)-1] }

type peer struct {
	h         *space.History
	accepted  []*space.Change // in the order this peer's history took them
	versions  map[string]*record.Version
	atKey     map[string]*record.Version
	snapshots [][]string
}

type gen struct {
	r        *rand.Rand
	g        *space.Genesis
	env      space.Env
	accounts []*account
	peers    []*peer
	out      []*record.Version
	clock    time.Time
	invites  []*identity.PrivateKey
	forks    [][2]*record.Version
	made     map[string]string
}

// Roles are the genesis roles of a random space.
var Roles = map[string][]space.Grant{
	"admin":  {space.MustGrant(space.CmdSpace), space.MustGrant(space.CmdDefine), space.MustGrant("/record")},
	"writer": {space.MustGrant("/record")},
	"poster": {space.MustGrant("/record/write", []any{"==", ".collection", "app.b"})},
	"own":    {space.MustGrant("/record", []any{"==", ".byCreator", true})},
	"reader": {},
}

var roleNames = []string{"admin", "writer", "poster", "own", "reader"}

var grantPool = []space.Grant{
	space.MustGrant("/record"),
	space.MustGrant("/record/write"),
	space.MustGrant("/record/write", []any{"==", ".collection", "app.a"}),
	space.MustGrant(space.CmdAssign),
	space.MustGrant(space.CmdRemove),
	space.MustGrant(space.CmdDefine),
}

// key derives a P-256 key from the generator, so the same seed gives the
// same accounts and ids.
func (g *gen) key() *identity.PrivateKey {
	for {
		var b [32]byte
		for i := range b {
			b[i] = byte(g.r.UintN(256))
		}
		k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), b[:])
		if err != nil {
			continue
		}
		pk, err := identity.NewPrivateKey(k)
		if err != nil {
			continue
		}
		return pk
	}
}

func (g *gen) newSigner(a *account) {
	k := g.key()
	n, err := identity.IssueNote(a.root, identity.NoteOptions{Aud: k.DID(), Cmd: "/", Nonce: fmt.Sprint(len(a.signers), g.r.Uint64())})
	if err != nil {
		panic(err)
	}
	s, err := identity.NewSessionSigner(k, n)
	if err != nil {
		panic(err)
	}
	a.signers = append(a.signers, &signer{s: s, did: k.DID(), logs: map[string]*record.Version{}})
}

// Random makes a random space from o.
func Random(o Options) (*Space, error) {
	g := &gen{r: rand.New(rand.NewPCG(o.Seed, o.Seed^0x5eed)), clock: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), made: map[string]string{}}
	if o.Founders <= 0 {
		o.Founders = 1 + g.r.IntN(2)
	}
	if o.Accounts <= 0 {
		o.Accounts = 5
	}
	if o.Peers <= 0 {
		o.Peers = 3
	}
	if o.Steps <= 0 {
		o.Steps = 60
	}
	var founders []string
	for i := 0; i < o.Founders+o.Accounts; i++ {
		a := &account{root: g.key()}
		a.did = a.root.DID()
		g.newSigner(a)
		g.accounts = append(g.accounts, a)
		if i < o.Founders {
			founders = append(founders, a.did)
		}
	}
	gs, err := space.NewGenesis(space.GenesisOptions{Name: fmt.Sprint("random ", o.Seed), Founders: founders, Roles: Roles,
		CreatedAt: record.FormatTime(g.clock), Nonce: fmt.Sprint(o.Seed)})
	if err != nil {
		return nil, err
	}
	g.g = gs
	notes := &identity.Checker{}
	g.env = space.Env{Notes: notes}
	for i := 0; i < o.Peers; i++ {
		g.peers = append(g.peers, &peer{h: space.NewHistory(gs, g.env), versions: map[string]*record.Version{}, atKey: map[string]*record.Version{}})
	}
	for step := 0; step < o.Steps; step++ {
		if err := g.step(); err != nil {
			return nil, fmt.Errorf("spacetest: seed %d step %d: %w", o.Seed, step, err)
		}
	}
	return &Space{Genesis: gs, Versions: g.out, Notes: notes, Made: g.made}, nil
}

func (g *gen) pick(n int) int { return g.r.IntN(n) }

func (g *gen) step() error {
	p := g.peers[g.pick(len(g.peers))]
	switch x := g.r.Float64(); {
	case x < 0.22:
		g.sync(p, g.peers[g.pick(len(g.peers))])
		return nil
	case x < 0.53:
		return g.writeRecord(p)
	case x < 0.62:
		return g.assign(p)
	case x < 0.67:
		return g.remove(p)
	case x < 0.70:
		return g.role(p)
	case x < 0.73:
		return g.revoke(p)
	case x < 0.79:
		return g.define(p)
	case x < 0.83:
		return g.invite(p)
	case x < 0.87:
		return g.fork(p)
	case x < 0.89:
		return g.forkAccess(p)
	case x < 0.93:
		return g.comeBack(p)
	case x < 0.95:
		return g.founderChange(p)
	default:
		return g.misc(p)
	}
}

// sync gives p what q knows: q's access changes in the order q took them,
// and its versions.
func (g *gen) sync(p, q *peer) {
	for _, c := range q.accepted {
		if !p.h.Has(c.ID) {
			if _, err := p.h.Add(c); err == nil {
				p.accepted = append(p.accepted, c)
			}
		}
	}
	for id, v := range q.versions {
		if _, ok := p.versions[id]; !ok {
			p.versions[id] = v
			if cur, ok := p.atKey[v.Key]; !ok || record.Supersedes(v, cur) {
				p.atKey[v.Key] = v
			}
		}
	}
}

// seen is what p's next write names: its heads, or now and then an older
// point it held (a stale or backdated seen).
func (g *gen) seen(p *peer) []string {
	heads := p.h.Heads()
	p.snapshots = append(p.snapshots, heads)
	if len(p.snapshots) > 1 && g.r.Float64() < 0.2 {
		return p.snapshots[g.pick(len(p.snapshots)-1)]
	}
	return heads
}

// author picks who writes: mostly someone p's history says is a member.
func (g *gen) author(p *peer) *account {
	now := p.h.Now()
	var members []*account
	for _, a := range g.accounts {
		if now.IsMember(a.did) {
			members = append(members, a)
		}
	}
	if len(members) > 0 && g.r.Float64() < 0.85 {
		return members[g.pick(len(members))]
	}
	return g.accounts[g.pick(len(g.accounts))]
}

// sign signs a version by a's signer at key (after what p holds there)
// and gives it to p.
func (g *gen) sign(p *peer, a *account, coll, key string, body any, seen []string, opts ...func(*record.Draft)) (*record.Version, error) {
	s := a.signer()
	g.clock = g.clock.Add(time.Duration(1+g.pick(5000)) * time.Millisecond)
	d := &record.Draft{Space: g.g.ID, Collection: coll, CreatedAt: g.clock, Key: key, After: p.atKey[key], Log: record.LogAfter(s.logs[coll]),
		Seen: seen, Retain: space.IsAccessCollection(coll), Deleted: body == nil, Body: body}
	for _, f := range opts {
		f(d)
	}
	v, err := d.Sign(s.s)
	if err != nil {
		return nil, err
	}
	s.logs[coll] = v
	g.out = append(g.out, v)
	p.versions[v.ID] = v
	p.atKey[key] = v
	if space.IsAccessCollection(coll) {
		c, err := space.ReadChange(g.g, v, a.did, g.env)
		if err == nil {
			if _, err := p.h.Add(c); err == nil {
				p.accepted = append(p.accepted, c)
			}
		}
	}
	return v, nil
}

// access signs an access change by a.
func (g *gen) access(p *peer, a *account, coll, key string, body any) error {
	_, err := g.sign(p, a, coll, key, body, g.seen(p))
	return err
}

// admin picks who changes access: mostly someone p's history says holds a
// /space grant (a founder or an admin), now and then anyone.
func (g *gen) admin(p *peer) *account {
	now := p.h.Now()
	var admins []*account
	for _, a := range g.accounts {
		if all, gs := now.Grants(a.did); all || slices.ContainsFunc(gs, func(x space.Grant) bool { return x.Cmd == space.CmdSpace }) {
			admins = append(admins, a)
		}
	}
	if len(admins) > 0 && g.r.Float64() < 0.85 {
		return admins[g.pick(len(admins))]
	}
	return g.author(p)
}

var collections = []string{"app.a", "app.b", "app.c"}

func (g *gen) writeRecord(p *peer) error {
	a := g.author(p)
	coll := collections[g.pick(len(collections))]
	seen := g.seen(p)
	key := ""
	var body any = canonical.NewObject("kind", []string{"x", "y"}[g.pick(2)], "n", float64(g.pick(100)))
	if len(p.atKey) > 0 && g.r.Float64() < 0.35 {
		// Edit or delete a record p holds, in its own collection.
		var keys []string
		for k, v := range p.atKey {
			if !record.IsSys(v.Collection) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		if len(keys) > 0 {
			key = keys[g.pick(len(keys))]
			coll = p.atKey[key].Collection
			if g.r.Float64() < 0.2 {
				body = nil
			}
		}
	}
	if key == "" {
		k, err := record.FreshKey(a.did)
		if err != nil {
			return err
		}
		key = k
	}
	var opts []func(*record.Draft)
	if st, err := p.h.At(seen); err == nil && body != nil {
		if in, _ := st.InForce(coll); in.Def != nil {
			if len(in.Def.Topics) > 0 && g.r.Float64() < 0.9 {
				tags, err := in.Def.Tags(collection.PublicTagKey(g.g.ID), collection.Content{Body: body})
				if err != nil {
					return err
				}
				opts = append(opts, func(d *record.Draft) { d.Tags = tags })
			}
			if collection.WriterMustRetain(coll, 0, false, in) {
				opts = append(opts, func(d *record.Draft) {
					if d.After == nil {
						d.Retain = true
					}
				})
			}
		}
	}
	_, err := g.sign(p, a, coll, key, body, seen, opts...)
	return err
}

func (g *gen) randomRoles() []any {
	var out []any
	for _, r := range roleNames {
		if g.r.Float64() < 0.3 {
			out = append(out, r)
		}
	}
	if len(out) == 0 && g.r.Float64() < 0.7 {
		out = append(out, roleNames[1+g.pick(len(roleNames)-1)])
	}
	if out == nil {
		out = []any{}
	}
	return out
}

func (g *gen) assign(p *peer) error {
	a := g.admin(p)
	m := g.accounts[g.pick(len(g.accounts))]
	return g.access(p, a, "sys.assign", "member:"+record.OwnerPart(m.did), canonical.NewObject("member", m.did, "roles", g.randomRoles()))
}

// keepOf is what p holds of m's keys: per key, per collection, the last log
// place, as a removal keeps it.
func (g *gen) keepOf(p *peer, m *account) *canonical.Object {
	keep := &canonical.Object{}
	for _, s := range m.signers {
		places := &canonical.Object{}
		for _, v := range p.versions {
			if v.Author == s.did && v.Log != nil && !record.IsSys(v.Collection) {
				if cur, ok := places.Get(v.Collection); !ok || cur.(float64) < float64(v.Log.N) {
					places.Set(v.Collection, float64(v.Log.N))
				}
			}
		}
		if places.Len() > 0 {
			slices.SortFunc(places.Members, func(x, y canonical.Member) int { return canonical.CompareUTF16(x.Name, y.Name) })
			keep.Set(s.did, places)
		}
	}
	return keep
}

func (g *gen) remove(p *peer) error {
	a := g.admin(p)
	m := g.accounts[g.pick(len(g.accounts))]
	body := canonical.NewObject("member", m.did)
	if g.r.Float64() < 0.5 {
		body.Set("keep", g.keepOf(p, m))
	}
	return g.access(p, a, "sys.remove", "remove:"+record.OwnerPart(m.did), body)
}

func (g *gen) role(p *peer) error {
	a := g.admin(p)
	name := roleNames[g.pick(len(roleNames))]
	if g.r.Float64() < 0.15 {
		return g.access(p, a, "sys.role", "role:"+name, nil)
	}
	var gs []any
	for _, gr := range grantPool {
		if g.r.Float64() < 0.35 {
			gs = append(gs, gr.Value())
		}
	}
	if gs == nil {
		gs = []any{}
	}
	return g.access(p, a, "sys.role", "role:"+name, canonical.NewObject("name", name, "grants", gs))
}

func (g *gen) revoke(p *peer) error {
	a := g.author(p)
	s := a.signer()
	cut := &canonical.Object{}
	for coll, v := range s.logs {
		if !record.IsSys(coll) && g.r.Float64() < 0.8 {
			n := v.Log.N - int64(g.pick(2))
			if n >= 0 {
				cut.Set(coll, float64(n))
			}
		}
	}
	slices.SortFunc(cut.Members, func(x, y canonical.Member) int { return canonical.CompareUTF16(x.Name, y.Name) })
	err := g.access(p, a, "sys.revoke", "revoke:"+record.OwnerPart(s.did), canonical.NewObject("key", s.did, "root", a.did, "cutoffs", cut))
	g.newSigner(a)
	return err
}

var definitions = []func(name string) *canonical.Object{
	func(name string) *canonical.Object {
		return canonical.NewObject("name", name, "version", float64(1), "schema", canonical.NewObject("type", "object"))
	},
	func(name string) *canonical.Object {
		return canonical.NewObject("name", name, "version", float64(2), "schema", canonical.NewObject("type", "object"), "topics", []any{"kind"})
	},
	func(name string) *canonical.Object {
		return canonical.NewObject("name", name, "version", float64(3), "schema", canonical.NewObject("type", "object"), "rules", canonical.NewObject("fixed", []any{"kind"}))
	},
	func(name string) *canonical.Object {
		return canonical.NewObject("name", name, "version", float64(4), "schema", canonical.NewObject("type", "object"), "rules", canonical.NewObject("final", true))
	},
}

func (g *gen) define(p *peer) error {
	a := g.admin(p)
	name := collections[g.pick(2)]
	key := "collection:" + name
	if g.r.Float64() < 0.15 {
		return g.access(p, a, "sys.collection", key, nil)
	}
	if g.r.Float64() < 0.25 {
		// A rival: as of an older point, at the key's first place.
		delete(p.atKey, key)
	}
	return g.access(p, a, "sys.collection", key, definitions[g.pick(len(definitions))](name))
}

func (g *gen) invite(p *peer) error {
	a := g.admin(p)
	if len(g.invites) == 0 || g.r.Float64() < 0.5 {
		ik := g.key()
		g.invites = append(g.invites, ik)
		return g.access(p, a, "sys.invite", "invite:"+record.OwnerPart(ik.DID()), canonical.NewObject("key", ik.DID(), "roles", g.randomRoles()))
	}
	ik := g.invites[g.pick(len(g.invites))]
	if g.r.Float64() < 0.2 {
		return g.access(p, a, "sys.invite", "invite:"+record.OwnerPart(ik.DID()), nil)
	}
	// Someone joins by it.
	m := g.accounts[g.pick(len(g.accounts))]
	sig, err := ik.Sign(space.JoinProof(g.g.ID, ik.DID(), m.did))
	if err != nil {
		return err
	}
	roles := g.randomRoles()
	body := canonical.NewObject("member", m.did, "roles", roles,
		"invite", canonical.NewObject("key", ik.DID(), "sig", base64.RawURLEncoding.EncodeToString(sig)))
	return g.access(p, m, "sys.assign", "member:"+record.OwnerPart(m.did), body)
}

// fork makes an account's key write twice at one place of a line, or, if
// one is known, proves a fork.
func (g *gen) fork(p *peer) error {
	if len(g.forks) > 0 && g.r.Float64() < 0.6 {
		pair := g.forks[g.pick(len(g.forks))]
		proof, ok := record.Fork(pair[0], pair[1])
		if !ok {
			return nil
		}
		a := g.author(p)
		p.versions[pair[0].ID], p.versions[pair[1].ID] = pair[0], pair[1]
		return g.access(p, a, "sys.fork", "fork:"+space.LineTag(pair[0].Author, pair[0].Collection), canonical.NewObject("proof", proof.Value()))
	}
	a := g.author(p)
	s := a.signer()
	coll := collections[g.pick(len(collections))]
	before := s.logs[coll]
	k1, _ := record.FreshKey(a.did)
	v1, err := g.sign(p, a, coll, k1, canonical.NewObject("kind", "x", "n", float64(1)), g.seen(p))
	if err != nil {
		return err
	}
	if before == nil {
		delete(s.logs, coll)
	} else {
		s.logs[coll] = before
	}
	k2, _ := record.FreshKey(a.did)
	v2, err := g.sign(p, a, coll, k2, canonical.NewObject("kind", "y", "n", float64(2)), g.seen(p))
	if err != nil {
		return err
	}
	g.forks = append(g.forks, [2]*record.Version{v1, v2})
	return nil
}

// forkAccess makes a key write two access changes at one place of its
// sys.assign line — two assignments, each as of what p knows — so that
// proving the fork (fork) withdraws what they gave.
func (g *gen) forkAccess(p *peer) error {
	a := g.admin(p)
	s := a.signer()
	before := s.logs["sys.assign"]
	assign := func() (*record.Version, error) {
		m := g.accounts[g.pick(len(g.accounts))]
		return g.sign(p, a, "sys.assign", "member:"+record.OwnerPart(m.did), canonical.NewObject("member", m.did, "roles", g.randomRoles()), g.seen(p))
	}
	v1, err := assign()
	if err != nil {
		return err
	}
	if before == nil {
		delete(s.logs, "sys.assign")
	} else {
		s.logs["sys.assign"] = before
	}
	v2, err := assign()
	if err != nil {
		return err
	}
	g.forks = append(g.forks, [2]*record.Version{v1, v2})
	g.made[v1.ID], g.made[v2.ID] = "access fork", "access fork"
	return nil
}

// comeBack has a member p's history holds a removal of come back: let in
// again by an admin's assignment, or signing a join by an invite it may
// have joined by before, which counts only when the invite was opened
// after the removal.
func (g *gen) comeBack(p *peer) error {
	var removed []*account
	for _, c := range p.accepted {
		if c.Kind != space.KindRemove {
			continue
		}
		for _, a := range g.accounts {
			if a.did == c.Target && !slices.Contains(removed, a) {
				removed = append(removed, a)
			}
		}
	}
	if len(removed) == 0 {
		return g.remove(p)
	}
	m := removed[g.pick(len(removed))]
	if len(g.invites) == 0 || g.r.Float64() < 0.5 {
		return g.madeAs("readmission", g.access(p, g.admin(p), "sys.assign", "member:"+record.OwnerPart(m.did), canonical.NewObject("member", m.did, "roles", g.randomRoles())))
	}
	ik := g.invites[g.pick(len(g.invites))]
	if g.r.Float64() < 0.5 {
		// An admin opens an invite for it, now: after the removal.
		ik = g.key()
		g.invites = append(g.invites, ik)
		roles := g.randomRoles()
		if err := g.access(p, g.admin(p), "sys.invite", "invite:"+record.OwnerPart(ik.DID()), canonical.NewObject("key", ik.DID(), "roles", roles)); err != nil {
			return err
		}
		sig, err := ik.Sign(space.JoinProof(g.g.ID, ik.DID(), m.did))
		if err != nil {
			return err
		}
		body := canonical.NewObject("member", m.did, "roles", roles,
			"invite", canonical.NewObject("key", ik.DID(), "sig", base64.RawURLEncoding.EncodeToString(sig)))
		_, err = g.sign(p, m, "sys.assign", "member:"+record.OwnerPart(m.did), body, p.h.Heads())
		return g.madeAs("rejoin", err)
	}
	sig, err := ik.Sign(space.JoinProof(g.g.ID, ik.DID(), m.did))
	if err != nil {
		return err
	}
	body := canonical.NewObject("member", m.did, "roles", g.randomRoles(),
		"invite", canonical.NewObject("key", ik.DID(), "sig", base64.RawURLEncoding.EncodeToString(sig)))
	return g.madeAs("rejoin", g.access(p, m, "sys.assign", "member:"+record.OwnerPart(m.did), body))
}

// madeAs names the version just made, when making it did not fail.
func (g *gen) madeAs(what string, err error) error {
	if err == nil {
		g.made[g.out[len(g.out)-1].ID] = what
	}
	return err
}

func (g *gen) founderChange(p *peer) error {
	a := g.author(p)
	if g.r.Float64() < 0.5 {
		m := g.accounts[g.pick(len(g.accounts))]
		return g.access(p, a, "sys.succeed", "succeed:"+record.OwnerPart(m.did), canonical.NewObject("founder", m.did))
	}
	return g.access(p, a, "sys.stepdown", "stepdown:"+record.OwnerPart(a.did), canonical.NewObject("founder", a.did))
}

func (g *gen) misc(p *peer) error {
	a := g.admin(p)
	if g.r.Float64() < 0.5 {
		return g.access(p, a, "sys.relays", "relays", canonical.NewObject("relays", []any{fmt.Sprintf("wss://relay%d.example", g.pick(4))}))
	}
	k := g.key()
	return g.access(p, a, "sys.keepers", "keepers", canonical.NewObject("keepers", []any{canonical.NewObject("did", k.DID(), "name", "keeper")}))
}
