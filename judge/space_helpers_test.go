package judge_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

var ctx = context.Background()

// account is a member: its root key, and the signer it writes with (a
// session key under a note from the root, or the root itself).
type account struct {
	name   string
	root   *identity.PrivateKey
	did    string
	signer identity.Signer
	logs   map[string]*record.Version
}

func newAccount(t testing.TB, name string, session bool) *account {
	t.Helper()
	root, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	a := &account{name: name, root: root, did: root.DID(), signer: root, logs: map[string]*record.Version{}}
	if session {
		a.newSession(t, "/")
	}
	return a
}

// newSession makes the account sign with a new session key under a note
// granting cmd.
func (a *account) newSession(t testing.TB, cmd string) {
	t.Helper()
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	n, err := identity.IssueNote(a.root, identity.NoteOptions{Aud: k.DID(), Cmd: cmd})
	if err != nil {
		t.Fatal(err)
	}
	s, err := identity.NewSessionSigner(k, n)
	if err != nil {
		t.Fatal(err)
	}
	a.signer = s
	a.logs = map[string]*record.Version{}
}

// peer is a store with the full judge, holding one space.
type peer struct {
	t  testing.TB
	st *engine.Store
	j  *judge.SpaceJudge
}

func newPeer(t testing.TB, g *space.Genesis) *peer {
	t.Helper()
	j := judge.NewSpaceJudge(&identity.Checker{})
	st, err := engine.Open(memory.Open(nil), &engine.Options{Judge: j, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	j.Source = st
	t.Cleanup(func() { st.Close() })
	p := &peer{t: t, st: st, j: j}
	if g != nil {
		if err := judge.AddGenesis(ctx, st, g); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func (p *peer) admit(vs ...*record.Version) []engine.Outcome {
	p.t.Helper()
	outs, err := p.st.Admit(ctx, "test", vs)
	if err != nil {
		p.t.Fatal(err)
	}
	return outs
}

// expect admits v and checks its outcome: a verdict and, for refused and
// withdrawn, the reason code.
func (p *peer) expect(v *record.Version, verdict engine.Verdict, code string) {
	p.t.Helper()
	o := p.admit(v)[0]
	got := ""
	if o.Refusal != nil {
		got = o.Refusal.Code
	}
	if o.Verdict != verdict || code != "" && got != code {
		p.t.Fatalf("%s %s: %v %q, want %v %q", v.Collection, v.Key, o.Verdict, got, verdict, code)
	}
}

// idOf is the digest of a test's id text.
func idOf(id string) canonical.ID {
	d, err := canonical.ParseID(id)
	if err != nil {
		panic(err)
	}
	return d
}

func (p *peer) standing(id string) engine.Verdict {
	p.t.Helper()
	v, _, err := p.st.Standing(ctx, idOf(id))
	if errors.Is(err, engine.ErrNotFound) {
		return engine.Refused
	}
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

func (p *peer) current(space, key string) string {
	p.t.Helper()
	v, err := p.st.Current(ctx, space, key)
	if errors.Is(err, engine.ErrNotFound) {
		return ""
	}
	if err != nil {
		p.t.Fatal(err)
	}
	return v.ID
}

func (p *peer) history(spaceID string) *space.History {
	p.t.Helper()
	h, ok, err := p.j.History(ctx, spaceID)
	if err != nil || !ok {
		p.t.Fatalf("history: %v %v", ok, err)
	}
	return h
}

// scene writes versions of one space.
type scene struct {
	t     testing.TB
	g     *space.Genesis
	atKey map[string]*record.Version
	clock int
}

func newScene(t testing.TB, founders []*account, roles map[string][]space.Grant) *scene {
	t.Helper()
	var dids []string
	for _, f := range founders {
		dids = append(dids, f.did)
	}
	g, err := space.NewGenesis(space.GenesisOptions{Name: "scene", Founders: dids, Roles: roles,
		CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return &scene{t: t, g: g, atKey: map[string]*record.Version{}}
}

// opt changes a version's draft before it is signed.
type opt func(d *record.Draft)

func withTags(tags ...string) opt { return func(d *record.Draft) { d.Tags = tags } }

func withLinks(ls ...record.Link) opt { return func(d *record.Draft) { d.Links = ls } }

func retained(d *record.Draft) { d.Retain = true }

// write signs a version by a at key in coll with body (nil: a delete), as
// of seen, after what the scene holds at key.
func (s *scene) write(a *account, coll, key string, body any, seen []string, opts ...opt) *record.Version {
	s.t.Helper()
	s.clock++
	d := &record.Draft{Space: s.g.ID, Collection: coll, CreatedAt: sceneStart.Add(time.Duration(s.clock) * time.Second), Key: key,
		After: s.atKey[key], Log: record.LogAfter(a.logs[coll]), Seen: seen, Retain: space.IsAccessCollection(coll), Deleted: body == nil, Body: body}
	for _, f := range opts {
		f(d)
	}
	v, err := d.Sign(a.signer)
	if err != nil {
		s.t.Fatal(err)
	}
	s.atKey[key] = v
	a.logs[coll] = v
	return v
}

// sceneStart is when a scene's clock starts.
var sceneStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// note writes a record at a fresh key of a's.
func (s *scene) note(a *account, coll string, body any, seen []string, opts ...opt) *record.Version {
	s.t.Helper()
	key, err := record.FreshKey(a.did)
	if err != nil {
		s.t.Fatal(err)
	}
	return s.write(a, coll, key, body, seen, opts...)
}

func (s *scene) assign(by, member *account, seen []string, roles ...string) *record.Version {
	l := make([]any, len(roles))
	for i, r := range roles {
		l[i] = r
	}
	return s.write(by, "sys.assign", "member:"+record.OwnerPart(member.did), canonical.NewObject("member", member.did, "roles", l), seen)
}

func (s *scene) remove(by, member *account, seen []string) *record.Version {
	return s.write(by, "sys.remove", "remove:"+record.OwnerPart(member.did), canonical.NewObject("member", member.did), seen)
}

func (s *scene) define(by *account, def *canonical.Object, seen []string) *record.Version {
	name, _ := def.Get("name")
	return s.write(by, "sys.collection", "collection:"+name.(string), def, seen)
}

func ids(vs ...*record.Version) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.ID
	}
	return out
}

func def(name string, extra ...any) *canonical.Object {
	o := canonical.NewObject("name", name, "version", float64(1), "schema", canonical.NewObject("type", "object"))
	for i := 0; i+1 < len(extra); i += 2 {
		o.Set(extra[i].(string), extra[i+1])
	}
	return o
}

func obj(pairs ...any) *canonical.Object { return canonical.NewObject(pairs...) }

func collectionTag(spaceID, coll, topic string, value any) (string, error) {
	return collection.Tag(collection.PublicTagKey(spaceID), coll, topic, value)
}
