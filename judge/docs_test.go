package judge_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/space/spacetest"
)

var updateDocs = flag.Bool("update-docs", false, "sign docs/spaces.md's worked examples again and write them into it")

const docsPath = "../docs/spaces.md"

// docKey is a key of the worked examples, the same every time.
func docKey(t *testing.T, name string) *identity.PrivateKey {
	k, err := spacetest.DocKey(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// example is one worked example: a version and the outcome docs/spaces.md
// says a peer gives it.
type example struct {
	name    string // the marker's name
	v       *record.Version
	outcome string // "stands", "withdrawn", "refused"
	code    string
}

var exampleMarker = regexp.MustCompile("(?s)<!-- example: ([a-z0-9.-]+) ([a-z]+)(?: ([a-z./-]+))? -->\n```json\n(.*?)\n```")

// docExamples signs the worked examples of docs/spaces.md: a public space
// whose founder Ada adds roles, an invite Ben joins by, Cy, a collection,
// relays and keepers; Cy revokes a lost key; Cy's key forks its line and
// Ben proves it; Ada removes Ben keeping what she had seen of him; Ada
// names Cy a founder and steps down.
func docExamples(t *testing.T) (*space.Genesis, []example) {
	ada, ben, cy, inv, lost, keeper := docKey(t, "ada"), docKey(t, "ben"), docKey(t, "cy"), docKey(t, "invite"), docKey(t, "lost"), docKey(t, "keeper")
	g, err := space.NewGenesis(space.GenesisOptions{Name: "Book club", Founders: []string{ada.DID()},
		Roles: map[string][]space.Grant{
			"admin":  {space.MustGrant(space.CmdSpace), space.MustGrant(space.CmdDefine), space.MustGrant("/record")},
			"writer": {space.MustGrant("/record")},
		}, CreatedAt: "2026-10-01T09:00:00.000Z", Nonce: "HJm3bKx1T0u6"})
	if err != nil {
		t.Fatal(err)
	}
	s := &scene{t: t, g: g, atKey: map[string]*record.Version{}}
	A := &account{did: ada.DID(), root: ada, signer: ada, logs: map[string]*record.Version{}}
	B := &account{did: ben.DID(), root: ben, signer: ben, logs: map[string]*record.Version{}}
	C := &account{did: cy.DID(), root: cy, signer: cy, logs: map[string]*record.Version{}}
	var out []example
	add := func(name string, v *record.Version, outcome, code string) *record.Version {
		out = append(out, example{name, v, outcome, code})
		return v
	}
	mod := add("sys.role", s.write(A, "sys.role", "role:moderator", obj("name", "moderator", "grants", []any{
		obj("cmd", "/record/delete"), obj("cmd", "/record/write", "pol", []any{[]any{"==", ".collection", "app.chat"}})}), nil), "stands", "")
	invite := add("sys.invite", s.write(A, "sys.invite", "invite:"+record.OwnerPart(inv.DID()), obj("key", inv.DID(), "roles", []any{"writer"}), ids(mod)), "stands", "")
	sig, err := inv.Sign(space.JoinProof(g.ID, inv.DID(), ben.DID()))
	if err != nil {
		t.Fatal(err)
	}
	join := add("sys.assign-join", s.write(B, "sys.assign", "member:"+record.OwnerPart(ben.DID()), obj("member", ben.DID(), "roles", []any{"writer"},
		"invite", obj("key", inv.DID(), "sig", base64.RawURLEncoding.EncodeToString(sig))), ids(invite)), "stands", "")
	cyIn := add("sys.assign", s.write(A, "sys.assign", "member:"+record.OwnerPart(cy.DID()), obj("member", cy.DID(), "roles", []any{"moderator", "writer"}), ids(join)), "stands", "")
	chat := add("sys.collection", s.define(A, obj("name", "app.chat", "version", float64(1), "schema", obj("type", "object",
		"properties", obj("text", obj("type", "string"), "channel", obj("type", "string"))), "topics", []any{"channel"}), ids(cyIn)), "stands", "")
	tag, err := collectionTag(g.ID, "app.chat", "channel", "fiction")
	if err != nil {
		t.Fatal(err)
	}
	benSays := add("record", s.note(B, "app.chat", obj("channel", "fiction", "text", "Chapter 3 tonight?"), ids(chat), withTags(tag)), "stands", "")
	relays := add("sys.relays", s.write(A, "sys.relays", "relays", obj("relays", []any{"wss://relay.example.org"}), ids(chat)), "stands", "")
	keepers := add("sys.keepers", s.write(A, "sys.keepers", "keepers", obj("keepers", []any{obj("did", keeper.DID(), "name", "Ada's carrier")}), ids(relays)), "stands", "")
	revoke := add("sys.revoke", s.write(C, "sys.revoke", "revoke:"+record.OwnerPart(lost.DID()), obj("key", lost.DID(), "root", cy.DID(), "cutoffs", obj("app.chat", float64(3))), ids(keepers)), "stands", "")
	c0 := add("record-c0", s.note(C, "app.chat", obj("channel", "fiction", "text", "Yes!"), ids(revoke), withTags(tag)), "stands", "")
	c1 := add("record-c1", s.note(C, "app.chat", obj("channel", "fiction", "text", "See you at 8"), ids(revoke), withTags(tag)), "stands", "")
	C.logs["app.chat"] = c0 // a copy of Cy's key writes at the same place
	c1b := add("record-c1b", s.note(C, "app.chat", obj("channel", "fiction", "text", "See you at 9"), ids(revoke), withTags(tag)), "stands", "")
	proof, ok := record.Fork(c1, c1b)
	if !ok {
		t.Fatal("no fork")
	}
	fork := add("sys.fork", s.write(B, "sys.fork", "fork:"+space.LineTag(cy.DID(), "app.chat"), obj("proof", proof.Value()), ids(revoke)), "stands", "")
	remove := add("sys.remove", s.write(A, "sys.remove", "remove:"+record.OwnerPart(ben.DID()), obj("member", ben.DID(),
		"keep", obj(ben.DID(), obj("app.chat", float64(benSays.Log.N)))), ids(fork)), "stands", "")
	add("record-late", s.note(B, "app.chat", obj("channel", "fiction", "text", "Wait for me"), ids(fork), withTags(tag)), "withdrawn", space.CodeWithdrawnMember)
	succeed := add("sys.succeed", s.write(A, "sys.succeed", "succeed:"+record.OwnerPart(cy.DID()), obj("founder", cy.DID()), ids(remove)), "stands", "")
	add("sys.stepdown", s.write(A, "sys.stepdown", "stepdown:"+record.OwnerPart(ada.DID()), obj("founder", ada.DID()), ids(succeed)), "stands", "")
	add("sys.key", s.write(C, "sys.key", "key:bkey0000000000000000000000000000000000000000000000000a", obj("keyId", "bkey0000000000000000000000000000000000000000000000000a"), ids(succeed)), "refused", space.CodeAccessPublic)
	return g, out
}

// TestDocsSpacesExamples replays docs/spaces.md's worked examples through
// the full judge: each version in the document, in order, must get the
// outcome the document gives it, and the state they leave is checked.
func TestDocsSpacesExamples(t *testing.T) {
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	if *updateDocs {
		g, exs := docExamples(t)
		byName := map[string]example{}
		for _, e := range exs {
			byName[e.name] = e
		}
		doc = exampleMarker.ReplaceAllFunc(doc, func(m []byte) []byte {
			sub := exampleMarker.FindSubmatch(m)
			name := string(sub[1])
			var val []byte
			head := "<!-- example: " + name + " "
			switch {
			case name == "genesis":
				val = g.Canonical()
				head += "genesis"
			default:
				e, ok := byName[name]
				if !ok {
					t.Fatalf("the document names an example %q the test does not make", name)
				}
				val, _ = e.v.MarshalJSON()
				head += e.outcome
				if e.code != "" {
					head += " " + e.code
				}
			}
			var pretty bytes.Buffer
			json.Indent(&pretty, val, "", "  ")
			return []byte(head + " -->\n```json\n" + pretty.String() + "\n```")
		})
		if err := os.WriteFile(docsPath, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ms := exampleMarker.FindAllSubmatch(doc, -1)
	if len(ms) < 17 {
		t.Fatalf("docs/spaces.md has %d worked examples", len(ms))
	}
	var g *space.Genesis
	var p *peer
	seen := map[string]bool{}
	for _, m := range ms {
		name, outcome, code, text := string(m[1]), string(m[2]), string(m[3]), m[4]
		if name == "genesis" {
			if g, err = space.ParseGenesis(text); err != nil {
				t.Fatalf("the genesis in docs/spaces.md: %v", err)
			}
			p = newPeer(t, g)
			continue
		}
		if p == nil {
			t.Fatal("docs/spaces.md shows versions before its genesis")
		}
		v, err := record.Decode(text)
		if err != nil {
			t.Fatalf("example %s: %v", name, err)
		}
		seen[strings.TrimSuffix(strings.SplitN(name, "-", 2)[0], "")] = true
		o := p.admit(v)[0]
		gotCode := ""
		if o.Refusal != nil {
			gotCode = o.Refusal.Code
		}
		if o.Verdict.String() != outcome || gotCode != code {
			t.Fatalf("example %s: %v %q, the document says %s %q", name, o.Verdict, gotCode, outcome, code)
		}
	}
	for _, c := range []string{"sys.role", "sys.assign", "sys.remove", "sys.invite", "sys.revoke", "sys.collection", "sys.key",
		"sys.relays", "sys.keepers", "sys.fork", "sys.stepdown", "sys.succeed"} {
		if !seen[c] {
			t.Fatalf("docs/spaces.md has no worked example of %s", c)
		}
	}
	// The state the examples leave, as the document describes it.
	now := p.history(g.ID).Now()
	ms2 := now.Members()
	if len(ms2) != 2 || ms2[0].Founder != true || ms2[1].Founder {
		t.Fatalf("members %+v: want Cy the founder and Ada", ms2)
	}
	if len(now.Revoked()) != 1 || len(now.Forked()) != 1 || len(now.Relays()) != 1 || len(now.Keepers()) != 1 {
		t.Fatalf("revoked %v forked %v relays %v keepers %v", now.Revoked(), now.Forked(), now.Relays(), now.Keepers())
	}
	for _, m := range ms {
		name := string(m[1])
		v, _ := record.Decode(m[4])
		want := map[string]engine.Verdict{"record": engine.Stands, "record-c0": engine.Stands, "record-c1": engine.Withdrawn, "record-c1b": engine.Withdrawn, "record-late": engine.Withdrawn}
		if w, ok := want[name]; ok && p.standing(v.ID) != w {
			t.Fatalf("%s ends %v, the document says %v", name, p.standing(v.ID), w)
		}
	}
}
