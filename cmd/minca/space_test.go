package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/space/spacetest"
)

func TestSpaceGenesis(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "k.pem")
	if _, e, code := minca(t, "", "keygen", "--out", keyFile); code != 0 {
		t.Fatalf("keygen: %s", e)
	}
	out, e, code := minca(t, "", "space", "genesis", "--key", keyFile, "--name", "Club", "--role", `writer=[{"cmd":"/record"}]`)
	if code != 0 {
		t.Fatalf("genesis: %d %s", code, e)
	}
	var got struct {
		ID      string          `json:"id"`
		Genesis json.RawMessage `json:"genesis"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	g, err := space.ParseGenesisFor(got.ID, got.Genesis)
	if err != nil || g.Name != "Club" || len(g.Roles["writer"]) != 1 {
		t.Fatalf("%+v %v", g, err)
	}
	if _, _, code := minca(t, "", "space", "genesis", "--name", "x"); code != 2 {
		t.Fatalf("no key: exit %d", code)
	}
	// Kept with a store, checked against its id.
	store := "sqlite:" + filepath.Join(dir, "s")
	if _, e, code := minca(t, out, "space", "join", "--store", store); code != 0 {
		t.Fatalf("join: %s", e)
	}
	if _, _, code := minca(t, string(got.Genesis), "space", "join", "--store", store, "--id", "b"+strings.Repeat("a", 52)); code != 2 {
		t.Fatalf("a genesis for another id: exit %d", code)
	}
	if out, _, code := minca(t, "", "space", "members", "--store", store, got.ID); code != 0 || !strings.Contains(out, `"founder":true`) {
		t.Fatalf("members: %d %s", code, out)
	}
	if _, _, code := minca(t, "", "space", "show", "--store", store, "b"+strings.Repeat("b", 52)); code != 3 {
		t.Fatalf("an unknown space: exit %d", code)
	}
}

// A random space through the command line: its genesis joined, its versions
// imported by the full judge, its state shown as the replay has it, and the
// store checked clean against the replay.
func TestSpaceVerbsOnARandomSpace(t *testing.T) {
	t.Parallel()
	sp, err := spacetest.Random(spacetest.Options{Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gfile := filepath.Join(dir, "genesis.json")
	os.WriteFile(gfile, sp.Genesis.Canonical(), 0o644)
	var lines []string
	for _, v := range sp.Versions {
		b, _ := v.MarshalJSON()
		lines = append(lines, string(b))
	}
	vfile := filepath.Join(dir, "versions.jsonl")
	os.WriteFile(vfile, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	store := "pebble:" + filepath.Join(dir, "store")
	if _, e, code := minca(t, "", "space", "join", "--store", store, "--id", sp.Genesis.ID, gfile); code != 0 {
		t.Fatalf("join: %s", e)
	}
	out, e, code := minca(t, "", "store", "import", "--store", store, vfile)
	outcomes := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var o struct{ Outcome string }
		json.Unmarshal([]byte(l), &o)
		outcomes[o.Outcome]++
	}
	if outcomes["stands"] == 0 || outcomes["withdrawn"] == 0 {
		t.Fatalf("outcomes %v", outcomes)
	}
	if want := min(outcomes["refused"], 1); code != want { // exit 1 when any was refused
		t.Fatalf("import: exit %d, want %d (outcomes %v): %s", code, want, outcomes, e)
	}
	if out, e, code := minca(t, "", "store", "check", "--store", store); code != 0 || out != "" {
		t.Fatalf("check: %d %s %s", code, out, e)
	}
	show, _, code := minca(t, "", "space", "show", "--store", store, sp.Genesis.ID)
	var s struct {
		ID       string   `json:"id"`
		Changes  int      `json:"changes"`
		Counting int      `json:"counting"`
		Heads    []string `json:"heads"`
		Members  int      `json:"members"`
		Revoked  []any    `json:"revoked"`
	}
	if err := json.Unmarshal([]byte(show), &s); code != 0 || err != nil || s.ID != sp.Genesis.ID || s.Changes == 0 || len(s.Heads) == 0 || s.Revoked == nil {
		t.Fatalf("show: %d %s", code, show)
	}
	members, _, _ := minca(t, "", "space", "members", "--store", store, sp.Genesis.ID)
	if n := len(strings.Split(strings.TrimSpace(members), "\n")); n != s.Members {
		t.Fatalf("members lists %d, show counts %d", n, s.Members)
	}
	hist, _, _ := minca(t, "", "space", "history", "--store", store, sp.Genesis.ID)
	if n := len(strings.Split(strings.TrimSpace(hist), "\n")); n != s.Changes {
		t.Fatalf("history lists %d, show counts %d", n, s.Changes)
	}
	// As of the first change in replay order: the history is that one.
	var first struct{ ID string }
	json.Unmarshal([]byte(strings.Split(hist, "\n")[0]), &first)
	asOf, _, code := minca(t, "", "space", "history", "--store", store, "--as-of", first.ID, sp.Genesis.ID)
	if code != 0 || len(strings.Split(strings.TrimSpace(asOf), "\n")) != 1 {
		t.Fatalf("history as of the first change: %d %s", code, asOf)
	}
	for _, verb := range []string{"roles", "definitions"} {
		if _, e, code := minca(t, "", "space", verb, "--store", store, sp.Genesis.ID); code != 0 {
			t.Fatalf("%s: %s", verb, e)
		}
	}
	if _, _, code := minca(t, "", "space", "members", "--store", store, "--as-of", "bnothere", sp.Genesis.ID); code != 3 {
		t.Fatalf("as of an unknown change: exit %d", code)
	}
}
