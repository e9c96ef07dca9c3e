package judge_test

import (
	"strings"
	"testing"

	"github.com/minca-go/minca/engine"
)

// 02 §6.1: "A peer MUST treat an invalid definition as no definition at
// all: its collection then has no schema, no rules and no topics." The
// state says so as judging does: a definition in force that is invalid —
// a keyword outside §6.2's subset, a sys.* name, a key that is not
// collection: + its name — is marked invalid, with why, and puts nothing in
// force; edits under its final stand.
func TestSpec_6_1AnInvalidDefinitionIsNoDefinitionAtAll(t *testing.T) {
	founder := newAccount(t, "founder", true)
	s := newScene(t, []*account{founder}, nil)
	pattern := s.define(founder, def("app.words", "rules", obj("final", true),
		"schema", obj("type", "object", "properties", obj("w", obj("type", "string", "pattern", "^a")))), nil)
	sysName := s.write(founder, "sys.collection", "collection:sys.thing", def("sys.thing"), ids(pattern))
	wrongKey := s.write(founder, "sys.collection", "collection:app.elsewhere", def("app.here"), ids(sysName))
	valid := s.define(founder, def("app.ok", "rules", obj("final", true)), ids(wrongKey))
	w := s.note(founder, "app.words", obj("w", "b"), ids(valid))
	edit := s.write(founder, "app.words", w.Key, obj("w", "c"), ids(valid))
	ok := s.note(founder, "app.ok", obj("w", "b"), ids(valid), retained)
	okEdit := s.write(founder, "app.ok", ok.Key, obj("w", "c"), ids(valid))
	p := newPeer(t, s.g)
	p.admit(pattern, sysName, wrongKey, valid, w, ok)
	p.expect(edit, engine.Stands, "")
	p.expect(okEdit, engine.Refused, "rule/final")
	now := p.history(s.g.ID).Now()
	for name, want := range map[string]string{"app.words": "pattern", "sys.thing": "sys.", "app.elsewhere": "collection:"} {
		d := now.Definition(name)
		if d.InForce == "" || d.Def != nil || d.Invalid == "" || !strings.Contains(d.Invalid, want) {
			t.Fatalf("%s: in force %q, def %v, invalid %q: want it marked invalid, naming %q", name, d.InForce, d.Def != nil, d.Invalid, want)
		}
	}
	if d := now.Definition("app.ok"); d.Def == nil || d.Invalid != "" {
		t.Fatalf("app.ok is valid: %+v", d)
	}
}
