package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/engine/mirror"
)

func TestEmptyLists(t *testing.T) {
	type inner struct {
		Names []string          `json:"names"`
		M     map[string]string `json:"m"`
	}
	type outer struct {
		A      []int    `json:"a"`
		In     inner    `json:"in"`
		P      *inner   `json:"p"`
		Nil    *inner   `json:"nil"`
		Any    any      `json:"any"`
		List   []inner  `json:"list"`
		Kept   []string `json:"kept"`
		hidden []string // unexported: left alone
		Res    mirror.CompactResult
	}
	v := outer{P: &inner{}, Any: inner{}, List: []inner{{}}, Kept: []string{"x"}}
	var b bytes.Buffer
	if err := writeJSON(&stdio{out: &b}, v); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	want := `{"a":[],"in":{"names":[],"m":{}},"p":{"names":[],"m":{}},"nil":null,"any":{"names":[],"m":{}},"list":[{"names":[],"m":{}}],"kept":["x"],"Res":{"rewrote":[],"wrote":[],`
	if !strings.HasPrefix(got, want) {
		t.Fatalf("got  %s\nwant %s…", got, want)
	}
	// The value given is not changed.
	if v.A != nil || v.P.Names != nil || v.In.M != nil {
		t.Fatalf("emptyLists changed its argument: %+v", v)
	}
	if emptyLists(nil) != nil {
		t.Fatal("nil is nil")
	}
	_ = v.hidden
}

var camel = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// checkStyle fails on any key that is not camelCase and on any null, in
// every JSON line of out; but a carry grant's pod, which 06 §4.3 says is
// null for an account not kept in a folder.
func checkStyle(t *testing.T, what, out string) {
	t.Helper()
	if strings.TrimSpace(out) == "" {
		t.Fatalf("%s printed nothing", what)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case nil:
			if what == "carrier add" && path == "$.pod" {
				return
			}
			t.Errorf("%s: null at %s", what, path)
		case map[string]any:
			for k, e := range x {
				if !camel.MatchString(k) {
					t.Errorf("%s: key %q at %s is not camelCase", what, k, path)
				}
				walk(path+"."+k, e)
			}
		case []any:
			for _, e := range x {
				walk(path+"[]", e)
			}
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var v any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%s: not JSON lines: %q", what, l)
		}
		walk("$", v)
	}
}

// Machine output is camelCase with no nulls: the stores' verbs, the blob
// store verbs (a second backup, which writes nothing, prints [] for its
// segments) and the benchmarks, whose times carry their unit in the key.
func TestOutputStyle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := &device{t: t, cache: filepath.Join(dir, "cache")}
	store := "pebble:" + filepath.Join(dir, "a")
	folder := "folder:" + filepath.Join(dir, "synced")
	file := versionsFile(t, dir, "v.jsonl", 200, 5)
	out, _, _ := d.minca("", "store", "import", "--judge", "roots", "--store", store, file)
	checkStyle(t, "store import", out)
	checkStyle(t, "store stats", d.mustRun("store", "stats", "--store", store))
	checkStyle(t, "backup", d.mustRun("backup", "--store", store, "--to", folder))
	out = d.mustRun("backup", "--store", store, "--to", folder)
	checkStyle(t, "a backup with nothing new", out)
	if !strings.Contains(out, `"segments":[]`) {
		t.Errorf("an empty backup: %s", out)
	}
	checkStyle(t, "restore", d.mustRun("restore", "--from", folder, "--store", "pebble:"+filepath.Join(dir, "b")))
	out = d.mustRun("compact", "--store", store, "--blobs", folder)
	checkStyle(t, "compact with one segment", out)
	if !strings.Contains(out, `"rewrote":[]`) {
		t.Errorf("compact of one segment: %s", out)
	}
	checkStyle(t, "mirror", d.mustRun("mirror", "--once", "--store", store, "--to", folder))
	out, _, _ = d.minca(`{"name":"x"}`, "collection", "check")
	checkStyle(t, "collection check", out)

	// Every verb that goes through the node: camelCase, no nulls, and the
	// shape docs/cli.md documents for it.
	shapes := documentedShapes(t)
	nodeVerb := func(stdin string, args ...string) string {
		t.Helper()
		out := runIn(t, stdin, args...)
		verb := calledVerb(args)
		if out == "" && verb == "space definitions" {
			return out // no collection defined
		}
		checkStyle(t, verb, out)
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			fits := false
			for _, sh := range shapes[verb] {
				fits = fits || sh.fits(l)
			}
			if !fits {
				t.Errorf("minca %s printed %s: not the shape docs/cli.md documents (%v)", verb, l, shapes[verb])
			}
		}
		return out
	}
	a, b := filepath.Join(dir, "node-a"), filepath.Join(dir, "node-b")
	nodeVerb("", "init", "--dir", a)
	bob := jsonField(t, nodeVerb("", "init", "--dir", b), "account")
	sp := jsonField(t, nodeVerb("", "space", "create", "club", "--roles", `{"writer":[{"cmd":"/record"}]}`, "--dir", a), "id")
	key := jsonField(t, nodeVerb(`{"text":"milk"}`, "put", sp, "app.todo", "--dir", a), "key")
	nodeVerb("", "get", sp, key, "--dir", a)
	nodeVerb("", "history", sp, key, "--dir", a)
	nodeVerb("", "query", sp, `{"collection":"app.todo"}`, "--dir", a)
	nodeVerb("", "watch", sp, "--after", "0", "--count", "1", "--dir", a)
	inv := jsonField(t, nodeVerb("", "space", "invite", sp, "--role", "writer", "--dir", a), "invite")
	nodeVerb("", "space", "join", inv, "--dir", b)
	for _, part := range []string{"members", "show", "roles", "definitions", "history", "list"} {
		if part == "list" {
			nodeVerb("", "space", part, "--dir", a)
			continue
		}
		nodeVerb("", "space", part, sp, "--dir", a)
	}
	nodeVerb("", "space", "assign", sp, bob, "--role", "writer", "--dir", a)
	nodeVerb("", "delete", sp, key, "--dir", a)
	nodeVerb("", "backup", "--to", "folder:"+filepath.Join(dir, "node-backup"), "--dir", a)
	nodeVerb("", "restore", "--from", "folder:"+filepath.Join(dir, "node-backup"), "--dir", b)
	carrier := runIn(t, "", "keygen", "--out", filepath.Join(dir, "carrier.key"))
	nodeVerb("", "carrier", "add", strings.TrimSpace(carrier), "--name", "box", "--dir", a)
	nodeVerb("", "carrier", "list", "--dir", a)
	nodeVerb("", "carrier", "remove", strings.TrimSpace(carrier), "--dir", a)
	nodeVerb("", "space", "remove", sp, bob, "--dir", a)
	nodeVerb("", "space", "leave", sp, "--dir", b)

	out = d.mustRun("bench", "negentropy", "--n", "2000", "--diffs", "0.01,0.1", "--runs", "1")
	checkStyle(t, "bench negentropy", out)
	var neg struct {
		Config map[string]any   `json:"config"`
		Rows   []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &neg); err != nil || len(neg.Rows) != 2 || neg.Config["n"] != 2000.0 {
		t.Fatalf("bench negentropy: %s", out)
	}
	for _, k := range []string{"clientMs", "serverMs", "buildMs", "roundTrips", "bytesUp", "bytesDown", "idealBytes"} {
		if _, ok := neg.Rows[0][k]; !ok {
			t.Errorf("bench negentropy: no %s in %v", k, neg.Rows[0])
		}
	}
	if ms := neg.Rows[0]["buildMs"].(float64); ms <= 0 || ms > 60_000 {
		t.Errorf("buildMs %v is not milliseconds", ms)
	}
}

// Long verbs log their progress when stderr is not a terminal: what they
// have done, and a percentage and an ETA when the total is known.
func TestProgressLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := &device{t: t, cache: filepath.Join(dir, "cache")}
	file := versionsFile(t, dir, "v.jsonl", 3500, 6) // four batches
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		s := &stdio{in: strings.NewReader(""), out: &out, err: &errb, logFormat: "json", progressEvery: time.Nanosecond, cacheDir: d.cache}
		if code := run(context.Background(), args, s); code != 0 {
			t.Fatalf("minca %v: exit %d\n%s", args, code, errb.String())
		}
		return errb.String()
	}
	records := func(stderr, msg string) []map[string]any {
		var rs []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
			var r map[string]any
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("not a JSON log line: %q", l)
			}
			if r["msg"] == msg && r["progress"] != nil {
				rs = append(rs, r)
			}
		}
		return rs
	}
	store := "pebble:" + filepath.Join(dir, "a")
	rs := records(run("store", "import", "--judge", "roots", "--store", store, file), "store import")
	if len(rs) < 3 {
		t.Fatalf("store import: %d progress records", len(rs))
	}
	last := rs[len(rs)-1]
	if last["percent"] != 100.0 || !strings.HasPrefix(last["progress"].(string), "3,") {
		t.Fatalf("store import's last progress: %v", last)
	}
	if _, ok := rs[0]["etaSeconds"]; !ok {
		t.Fatalf("no ETA: %v", rs[0])
	}
	rs = records(run("store", "export", "--store", store), "store export")
	if len(rs) != 3 || rs[2]["progress"] != "3,000 versions" {
		t.Fatalf("store export: %v", rs)
	}
	folder := "folder:" + filepath.Join(dir, "f")
	// Small segments, so a backup writes several and a restore reads them.
	for i := range 3 {
		d.mustRun("store", "import", "--judge", "roots", "--store", store, versionsFile(t, dir, fmt.Sprint("more", i), 200, uint64(10+i)))
		if rs := records(run("backup", "--store", store, "--to", folder), "backup"); len(rs) == 0 || !strings.Contains(rs[0]["progress"].(string), "segments") {
			t.Fatalf("backup: %v", rs)
		}
	}
	rs = records(run("restore", "--from", folder, "--store", "pebble:"+filepath.Join(dir, "b")), "restore")
	// The mirror reports at most once a second (everySecond): the first
	// segment at least.
	if len(rs) == 0 || !strings.HasPrefix(rs[0]["progress"].(string), "1 of 3 segments read") || rs[0]["percent"].(float64) < 33 {
		t.Fatalf("restore: %v", rs)
	}
}
