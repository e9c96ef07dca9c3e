package space_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// actor is an account that signs for itself (no note: its root is its key).
type actor struct {
	name string
	key  *identity.PrivateKey
	did  string
	logs map[string]*record.Version // its last version per collection
}

func newActor(t testing.TB, name string) *actor {
	t.Helper()
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return &actor{name: name, key: k, did: k.DID(), logs: map[string]*record.Version{}}
}

// world is a space being written: its genesis, a history replaying it, and
// the latest version written at each key (what a writer derives the next
// version from).
type world struct {
	t      testing.TB
	g      *space.Genesis
	h      *space.History
	atKey  map[string]*record.Version
	clock  int
	byName map[string]*record.Version
}

func newWorld(t testing.TB, founders []*actor, roles map[string][]space.Grant) *world {
	t.Helper()
	var dids []string
	for _, f := range founders {
		dids = append(dids, f.did)
	}
	g, err := space.NewGenesis(space.GenesisOptions{Name: "test", Founders: dids, Roles: roles,
		CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: fmt.Sprint(len(dids), t.Name())})
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, g: g, h: space.NewHistory(g, space.Env{}), atKey: map[string]*record.Version{}, byName: map[string]*record.Version{}}
}

// sign writes a version by a at key in coll with body (nil body: a delete),
// seeing seen (nil: absent), after what the world holds at key.
func (w *world) sign(a *actor, coll, key string, body any, seen []string) *record.Version {
	w.t.Helper()
	w.clock++
	d := &record.Draft{Space: w.g.ID, Collection: coll, CreatedAt: time.Date(2026, 1, 1, 0, 0, w.clock, 0, time.UTC), Key: key,
		After: w.atKey[key], Log: record.LogAfter(a.logs[coll]), Seen: seen, Retain: space.IsAccessCollection(coll), Deleted: body == nil, Body: body}
	v, err := d.Sign(a.key)
	if err != nil {
		w.t.Fatal(err)
	}
	w.atKey[key] = v
	a.logs[coll] = v
	return v
}

// read reads an access version as a change of the world's space.
func (w *world) read(v *record.Version) *space.Change {
	w.t.Helper()
	c, err := space.ReadChange(w.g, v, v.Author, space.Env{})
	if err != nil {
		w.t.Fatalf("read %s: %v", v.Collection, err)
	}
	return c
}

// add reads and adds a change, failing the test if it is refused.
func (w *world) add(v *record.Version) space.Result {
	w.t.Helper()
	r, err := w.h.Add(w.read(v))
	if err != nil {
		w.t.Fatalf("add %s %s: %v", v.Collection, v.Key, err)
	}
	return r
}

// refused adds a change that must be refused with code.
func (w *world) refused(v *record.Version, code string) {
	w.t.Helper()
	c, err := space.ReadChange(w.g, v, v.Author, space.Env{})
	if err == nil {
		_, err = w.h.Add(c)
	}
	var r *record.Refusal
	if !errors.As(err, &r) || r.Code != code {
		w.t.Fatalf("%s %s: want refusal %s, got %v", v.Collection, v.Key, code, err)
	}
}

func roleBody(name string, gs ...space.Grant) *canonical.Object {
	l := make([]any, len(gs))
	for i, g := range gs {
		l[i] = g.Value()
	}
	return canonical.NewObject("name", name, "grants", l)
}

func assignBody(member string, roles ...string) *canonical.Object {
	l := make([]any, len(roles))
	for i, r := range roles {
		l[i] = r
	}
	return canonical.NewObject("member", member, "roles", l)
}

func memberKey(did string) string { return "member:" + record.OwnerPart(did) }
func removeKey(did string) string { return "remove:" + record.OwnerPart(did) }
func ids(vs ...*record.Version) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.ID
	}
	return out
}

func definition(name string, version int) *canonical.Object {
	return canonical.NewObject("name", name, "version", float64(version),
		"schema", canonical.NewObject("type", "object"))
}
