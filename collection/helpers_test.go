package collection

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

const (
	testSpace = "bimjoifogypbqrtuich3e375d67y43znkjsjnp4q4qhe7gwf7u74a"
	testRoot  = "did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E"
	testOwner = "akthxqofxox3iszhpi5j3zhl6a"
)

// stdVote is the std.vote definition of 02 §6.1, as stored.
const stdVote = `{ "name": "std.vote", "title": "Vote", "description": "A vote on a poll: one per person, changed by voting again.", "schema": { "type": "object", "properties": { "choice": { "type": "integer", "minimum": 0, "x-choicesFrom": { "rel": "about", "field": "options" } } }, "required": ["choice"] }, "version": 1, "links": { "about": { "to": ["std.poll"], "cardinality": "one", "description": "The poll voted on" } }, "rules": { "onePer": ["@author", "link:about"] } }`

func parse(t testing.TB, s string) any {
	t.Helper()
	v, err := canonical.Parse([]byte(s))
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return v
}

func mustDef(t testing.TB, s string) *Definition {
	t.Helper()
	d, err := ParseDefinition(parse(t, s))
	if err != nil {
		t.Fatalf("definition %s: %v", s, err)
	}
	return d
}

// def builds a definition of name with the given extra members (a JSON
// object's inside, without braces), a minimal schema and version 1.
func def(t testing.TB, name, extra string) *Definition {
	t.Helper()
	s := `{"name":"` + name + `","schema":{"type":"object"},"version":1`
	if extra != "" {
		s += "," + extra
	}
	return mustDef(t, s+"}")
}

// ver builds an unsigned-but-well-shaped version from members given as a
// JSON object's inside: FromValue checks its shape only, so the id, the
// signature and bodyHash are placeholders. seq > 0 gets prev and genesis.
func ver(t testing.TB, members string) *record.Version {
	t.Helper()
	o := parse(t, "{"+members+"}").(*canonical.Object)
	defaults := []canonical.Member{
		{Name: "id", Value: "bthisversion"},
		{Name: "author", Value: testRoot},
		{Name: "createdAt", Value: "2026-09-26T12:00:00.000Z"},
		{Name: "space", Value: testSpace},
		{Name: "log", Value: canonical.NewObject("n", 0.0)},
		{Name: "signature", Value: "sig"},
		{Name: "seq", Value: 0.0},
	}
	for _, m := range defaults {
		if !o.Has(m.Name) {
			o.Set(m.Name, m.Value)
		}
	}
	if seq, _ := o.Get("seq"); seq != 0.0 {
		if !o.Has("prev") {
			o.Set("prev", "bprev")
		}
		if !o.Has("genesis") {
			o.Set("genesis", "bfirst")
		}
	}
	if del, _ := o.Get("deleted"); del != true && !o.Has("bodyHash") {
		o.Set("bodyHash", "bhash")
	}
	v, err := record.FromValue(o)
	if err != nil {
		t.Fatalf("version {%s}: %v", members, err)
	}
	return v
}

func specVectors(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("../testdata/spec-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// wantReason fails unless err is an *Invalid with a reason of code whose
// path contains path.
func wantReason(t testing.TB, err error, code, path string) {
	t.Helper()
	inv, ok := err.(*Invalid)
	if !ok {
		t.Fatalf("want an invalid definition with %s at %s, got %v", code, path, err)
	}
	for _, r := range inv.Reasons {
		if r.Code == code && strings.Contains(r.Path, path) {
			if r.Message == "" {
				t.Fatalf("reason %s has no message", code)
			}
			return
		}
	}
	t.Fatalf("want %s at %s, got %v", code, path, inv.Reasons)
}

// wantRefusal fails unless err is a *record.Refusal with code.
func wantRefusal(t testing.TB, err error, code string) {
	t.Helper()
	r, ok := err.(*record.Refusal)
	if !ok || r.Code != code {
		t.Fatalf("want refusal %s, got %v", code, err)
	}
	if r.Message == "" || r.Field == "" {
		t.Fatalf("refusal %s without field or message", code)
	}
}

func wantIssues(t testing.TB, got []Issue, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("want issues %v, got %v", want, got)
	}
	for i, w := range want {
		code, path, _ := strings.Cut(w, " ")
		if got[i].Code != code || got[i].Path != path {
			t.Fatalf("issue %d: want %s, got %v", i, w, got[i])
		}
	}
}
