package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	cliSpace = "bimjoifogypbqrtuich3e375d67y43znkjsjnp4q4qhe7gwf7u74a"
	cliRoot  = "did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E"
	cliVote  = `{ "name": "std.vote", "title": "Vote", "description": "A vote on a poll: one per person, changed by voting again.", "schema": { "type": "object", "properties": { "choice": { "type": "integer", "minimum": 0, "x-choicesFrom": { "rel": "about", "field": "options" } } }, "required": ["choice"] }, "version": 1, "links": { "about": { "to": ["std.poll"], "cardinality": "one", "description": "The poll voted on" } }, "rules": { "onePer": ["@author", "link:about"] } }`
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCollectionCheck(t *testing.T) {
	out, _, code := minca(t, cliVote, "collection", "check")
	if code != 0 || out != `{"valid":true}`+"\n" {
		t.Fatalf("std.vote: %d %q", code, out)
	}
	out, _, code = minca(t, `{"name":"sys.x","schema":{"pattern":"a"},"version":1,"topics":["a.b.c.d.e"]}`, "collection", "check")
	var res struct {
		Valid   bool
		Reasons []struct{ Code, Path, Message string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.Valid || len(res.Reasons) != 3 {
		t.Fatalf("invalid: %d %q", code, out)
	}
	if res.Reasons[0].Code != "def/name" || res.Reasons[1].Path != "$.schema.pattern" || res.Reasons[2].Code != "def/topics" {
		t.Fatalf("%+v", res.Reasons)
	}
	// A file argument; bad JSON; a schema nested 10,000 deep (the JSON reader refuses it).
	if out, _, code := minca(t, "", "collection", "check", writeFile(t, "d.json", cliVote)); code != 0 || !strings.Contains(out, "true") {
		t.Fatalf("file: %d %q", code, out)
	}
	if _, errs, code := minca(t, `{"name":`, "collection", "check"); code != 2 || !strings.Contains(errs, "json/syntax") {
		t.Fatalf("bad JSON: %d %q", code, errs)
	}
	deep := `{"name":"a.b","version":1,"schema":` + strings.Repeat(`{"items":`, 10_000) + `{}` + strings.Repeat(`}`, 10_001)
	if _, errs, code := minca(t, deep, "collection", "check"); code != 2 || !strings.Contains(errs, "json/depth") {
		t.Fatalf("deep: %d %q", code, errs)
	}
	if _, _, code := minca(t, "", "collection", "check", "--help"); code != 0 {
		t.Fatal("--help")
	}
	if _, _, code := minca(t, "", "collection"); code != 2 {
		t.Fatal("no subverb")
	}
}

func TestCollectionValidate(t *testing.T) {
	def := writeFile(t, "vote.json", cliVote)
	out, _, code := minca(t, `{"choice":1}`, "collection", "validate", "--def", def)
	if code != 0 || out != "" {
		t.Fatalf("fits: %d %q", code, out)
	}
	out, _, code = minca(t, "{\"choice\":-1}\n{\"choice\":2}\n{}\n", "collection", "validate", "--def", def)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], `{"code":"schema/minimum","message":`) || !strings.HasSuffix(lines[0], `"n":0,"path":"$.choice"}`) ||
		!strings.Contains(lines[1], `"code":"schema/required"`) || !strings.Contains(lines[1], `"n":2`) {
		t.Fatalf("issues are flags, exit 0: %d\n%s", code, out)
	}
	if _, _, code := minca(t, `{"choice":`, "collection", "validate", "--def", def); code != 2 {
		t.Fatalf("a body that is not JSON: %d", code)
	}
	bad := writeFile(t, "bad.json", `{"name":"app.x","version":1,"schema":{"format":"email"}}`)
	if _, errs, code := minca(t, `{}`, "collection", "validate", "--def", bad); code != 2 || !strings.Contains(errs, "$.schema.format") {
		t.Fatalf("an invalid definition: %d %q", code, errs)
	}
	if _, _, code := minca(t, `{}`, "collection", "validate"); code != 2 {
		t.Fatal("no --def")
	}
}

func TestKeyOne(t *testing.T) {
	vote := writeFile(t, "vote.json", cliVote)
	version := `{"collection":"std.vote","body":{"choice":0},"links":[{"rel":"about","to":"akthxqofxox3iszhpi5j3zhl6a.poll"}]}`
	out, _, code := minca(t, version, "key", "one", "--space", cliSpace, "--def", vote, "--author", cliRoot)
	if code != 0 || out != "akthxqofxox3iszhpi5j3zhl6a.one:a91e596711387286109b7a5b7f6d511b2620458a\n" {
		t.Fatalf("public vote: %d %q", code, out)
	}
	k0 := "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0efeeedecebeae9e8e7e6e5e4e3e2e1e0"
	out, _, code = minca(t, version, "key", "one", "--space", cliSpace, "--k0", k0, "--def", vote, "--author", cliRoot)
	if code != 0 || out != "akthxqofxox3iszhpi5j3zhl6a.one:22da47c4972f8ae73081b863a93577bd52bbe942\n" {
		t.Fatalf("private vote: %d %q", code, out)
	}
	decision := writeFile(t, "decision.json", `{"name":"std.decision","schema":{},"version":1,"rules":{"onePer":["link:about"]}}`)
	out, _, code = minca(t, `{"body":{},"links":[{"rel":"about","to":"akthxqofxox3iszhpi5j3zhl6a.poll"}]}`, "key", "one", "--space", cliSpace, "--def", decision, "--author", cliRoot)
	if code != 0 || out != "one:a1452e7523f8d551ce60f1a9f265a1878fa6b97a\n" {
		t.Fatalf("public decision: %d %q", code, out)
	}
	// No link about: no key, the part named, exit 1.
	if out, errs, code := minca(t, `{"body":{"choice":0}}`, "key", "one", "--space", cliSpace, "--def", vote, "--author", cliRoot); code != 1 || out != "" || !strings.Contains(errs, "link:about") {
		t.Fatalf("no key: %d %q %q", code, out, errs)
	}
	// Bad input: a definition without onePer, another collection, a bad K₀, a bad DID, no space.
	plain := writeFile(t, "plain.json", `{"name":"std.vote","schema":{},"version":1}`)
	for _, args := range [][]string{
		{"--space", cliSpace, "--def", plain, "--author", cliRoot},
		{"--space", cliSpace, "--k0", "abcd", "--def", vote, "--author", cliRoot},
		{"--space", cliSpace, "--def", vote, "--author", "did:key:nope"},
		{"--space", "not-a-space", "--def", vote, "--author", cliRoot},
		{"--def", vote, "--author", cliRoot},
	} {
		if _, _, code := minca(t, version, append([]string{"key", "one"}, args...)...); code != 2 {
			t.Fatalf("%v: exit %d", args, code)
		}
	}
	if _, _, code := minca(t, `{"collection":"std.poll","body":{}}`, "key", "one", "--space", cliSpace, "--def", vote, "--author", cliRoot); code != 2 {
		t.Fatal("another collection's version")
	}
}

func TestTagsVerb(t *testing.T) {
	chat := writeFile(t, "chat.json", `{"name":"app.chat.message","schema":{},"version":1,"topics":["channel"]}`)
	out, _, code := minca(t, "{\"body\":{\"channel\":\"design\"}}\n{\"body\":{}}\n{\"seq\":3,\"deleted\":true,\"body\":null}\n", "tags", "--space", cliSpace, "--def", chat)
	if code != 0 || out != "{\"tags\":[\"Hh5Cwzt8mQlIfYWE_cPjkA\"]}\n{\"tags\":[]}\n{\"tags\":[]}\n" {
		t.Fatalf("channel: %d %q", code, out)
	}
	msg := writeFile(t, "msg.json", `{"name":"std.message","schema":{},"version":1,"topics":["link:in"]}`)
	out, _, code = minca(t, `{"body":{"text":"hi"},"links":[{"rel":"in","to":"mfrggzdfmztwq2lknnwg23tpoa"}]}`, "tags", "--space", cliSpace, "--def", msg)
	if code != 0 || out != `{"tags":["FfavMdkS1rv7FcKY9sNSoA"]}`+"\n" {
		t.Fatalf("link:in: %d %q", code, out)
	}
	out, _, code = minca(t, `{"body":{"channel":"design"}}`, "tags", "--space", cliSpace, "--k0", strings.Repeat("00", 32), "--def", chat)
	if code != 0 || !strings.HasPrefix(out, `{"tags":["`) || strings.Contains(out, "Hh5Cwzt8mQlIfYWE_cPjkA") {
		t.Fatalf("private: %d %q", code, out)
	}
	if _, _, code := minca(t, `{"links":[]}`, "tags", "--space", cliSpace, "--def", chat); code != 2 {
		t.Fatal("no body")
	}
	if _, _, code := minca(t, `{"body":{},"links":[{"rel":"In","to":"x"}]}`, "tags", "--space", cliSpace, "--def", chat); code != 2 {
		t.Fatal("malformed links")
	}
}
