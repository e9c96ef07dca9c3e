package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// minca runs the command line in process with stdin and returns stdout,
// stderr and the exit code.
func minca(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return (&device{t: t}).minca(stdin, args...)
}

// device runs minca in process as one machine does: with the local
// indexes of folder: and s3:// stores in a cache directory of its own
// (stdio.cacheDir). Two devices reading one folder store each keep their
// own index there. It is what lets such tests run in parallel: none sets
// the process's environment (XDG_CACHE_HOME) to choose the cache.
type device struct {
	t     *testing.T
	cache string // "": the default, the user's cache directory (XDG_CACHE_HOME)
}

// minca runs the command line on the device, as the function minca does.
func (d *device) minca(stdin string, args ...string) (string, string, int) {
	d.t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &stdio{in: strings.NewReader(stdin), out: &out, err: &errb, cacheDir: d.cache})
	return out.String(), errb.String(), code
}

// mustRun runs minca on the device and fails the test unless it exits 0.
func (d *device) mustRun(args ...string) string {
	d.t.Helper()
	out, errs, code := d.minca("", args...)
	if code != 0 {
		d.t.Fatalf("minca %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

// exported is `store export` as a sorted set of lines.
func (d *device) exported(store string) []string {
	d.t.Helper()
	lines := strings.Split(strings.TrimSpace(d.mustRun("store", "export", "--store", store)), "\n")
	sort.Strings(lines)
	return lines
}

// sameExport fails the test unless stores a and b hold the same versions.
func (d *device) sameExport(a, b string) {
	d.t.Helper()
	x, y := d.exported(a), d.exported(b)
	if strings.Join(x, "\n") != strings.Join(y, "\n") {
		d.t.Fatalf("%s and %s hold different versions (%d and %d lines)", a, b, len(x), len(y))
	}
}

func specVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/spec-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		V struct {
			Version json.RawMessage `json:"version"`
		} `json:"version_02_3_4"`
	}
	json.Unmarshal(b, &v)
	return string(v.V.Version)
}

func TestCanon(t *testing.T) {
	out, _, code := minca(t, `{ "b": [1, "x", null, true, { "c": 1.5e21 }], "a": "é\ud800", "B": -0, "10": 1, "9": 2, "Z": 0.1 }`, "canon")
	if code != 0 || out != `{"10":1,"9":2,"B":0,"Z":0.1,"a":"é\ud800","b":[1,"x",null,true,{"c":1.5e+21}]}`+"\n" {
		t.Fatalf("canon: %d %q", code, out)
	}
	if _, errs, code := minca(t, `{"a":1,"a":2}`, "canon"); code != 2 || !strings.Contains(errs, "json/duplicate") {
		t.Fatalf("duplicate: %d %q", code, errs)
	}
	out, _, code = minca(t, "[1.0]\n{\"a\":\nnull\n\"\\ud83d\\ude00\"", "canon", "--lines")
	want := "[1]\nerror: json/syntax at byte 5: unexpected end of input, expected a value\nnull\n\"😀\"\n"
	if code != 2 || out != want {
		t.Fatalf("canon --lines: %d\n%q\nwant\n%q", code, out, want)
	}
	if _, _, code := minca(t, "", "canon", "a", "b"); code != 2 {
		t.Fatalf("two arguments: exit %d", code)
	}
	if _, _, code := minca(t, "", "canon", "--help"); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
}

func TestCID(t *testing.T) {
	out, _, code := minca(t, `{"text": "Buy milk", "done": false}`, "cid")
	if code != 0 || out != "b47jrvlapsxwsx44hipgsfbwdbupytsv4giuf4hxgoj33hiq4oubq\n" {
		t.Fatalf("cid: %d %q", code, out)
	}
	out, _, _ = minca(t, `{"done":false,"text":"Buy milk"}`, "cid", "--raw")
	if out != "b47jrvlapsxwsx44hipgsfbwdbupytsv4giuf4hxgoj33hiq4oubq\n" {
		t.Fatalf("cid --raw: %q", out)
	}
	out2, _, _ := minca(t, `{"text": "Buy milk", "done": false}`, "cid", "--raw")
	if out2 == out {
		t.Fatal("--raw hashed the canonical form")
	}
	if _, _, code := minca(t, `{`, "cid"); code != 2 {
		t.Fatalf("bad JSON: exit %d", code)
	}
}

func TestKeygenSignVerify(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "k.pem")
	did, _, code := minca(t, "", "keygen", "--out", keyFile)
	did = strings.TrimSpace(did)
	if code != 0 || !strings.HasPrefix(did, "did:key:zDnae") {
		t.Fatalf("keygen: %d %q", code, did)
	}
	if info, _ := os.Stat(keyFile); info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v", info.Mode())
	}
	if _, _, code := minca(t, "", "keygen", "--out", keyFile); code != 2 {
		t.Fatal("keygen overwrote a key file")
	}
	owner, _, _ := minca(t, "", "key", "owner", did)
	fresh, _, _ := minca(t, "", "key", "fresh", did)
	owner, fresh = strings.TrimSpace(owner), strings.TrimSpace(fresh)
	if len(owner) != 26 || !strings.HasPrefix(fresh, owner+".") || len(fresh) != 53 {
		t.Fatalf("owner %q fresh %q", owner, fresh)
	}
	unsigned := `{"collection":"app.todo.item","createdAt":"2026-09-26T12:00:00.000Z","space":"bimjoifogypbqrtuich3e375d67y43znkjsjnp4q4qhe7gwf7u74a","key":"` + fresh + `","seq":0,"log":{"n":0},"body":{"text":"hi"},"future":{"kept":true}}`
	signed, errs, code := minca(t, unsigned+"\n"+unsigned+"\n", "sign", "--key", keyFile)
	if code != 0 || strings.Count(signed, "\n") != 2 {
		t.Fatalf("sign: %d %q %s", code, signed, errs)
	}
	out, _, code := minca(t, signed, "verify")
	if code != 0 || strings.Count(out, `"ok":true`) != 2 {
		t.Fatalf("verify: %d %q", code, out)
	}
	// One tampered line among good ones: exit 1, a line for each.
	lines := strings.Split(strings.TrimSpace(signed), "\n")
	bad := strings.Replace(lines[1], `"kept":true`, `"kept":false`, 1)
	out, _, code = minca(t, lines[0]+"\n"+bad+"\n", "verify")
	if code != 1 || !strings.Contains(out, `"reason":"crypto/id"`) || strings.Count(out, "\n") != 2 {
		t.Fatalf("tampered: %d %q", code, out)
	}
	// A key of another account: the owner check of 02 §4.1.
	other := filepath.Join(dir, "other.pem")
	minca(t, "", "keygen", "--out", other)
	if _, errs, code := minca(t, unsigned, "sign", "--key", other); code != 2 || !strings.Contains(errs, "key/owner") {
		t.Fatalf("sign at someone else's key: %d %s", code, errs)
	}
	ok, err := identity.ReadKeyFile(other)
	if err != nil {
		t.Fatal(err)
	}
	uo, _ := canonical.Parse([]byte(unsigned))
	mv, err := record.Sign(uo.(*canonical.Object), ok)
	if err != nil {
		t.Fatal(err)
	}
	mine, _ := canonical.Marshal(mv.Object())
	out, _, code = minca(t, string(mine), "verify")
	if code != 1 || !strings.Contains(out, `"reason":"key/owner"`) {
		t.Fatalf("someone else's key: %d %q", code, out)
	}
	// Leave the key out and sign makes a fresh one of the signer's.
	noKey := strings.Replace(unsigned, `"key":"`+fresh+`",`, "", 1)
	out, errs, code = minca(t, noKey, "sign", "--key", other)
	if code != 0 || !strings.Contains(out, `"key":"`+record.OwnerPart(ok.DID())+`.`) {
		t.Fatalf("sign with no key: %d %q %s", code, out, errs)
	}
	// A collection no definition can name, a body that is not an object.
	for _, c := range []struct{ from, to, want string }{
		{`"collection":"app.todo.item"`, `"collection":"Todo"`, "lower case with at least one dot"},
		{`"body":{"text":"hi"}`, `"body":7`, "a record's body is a JSON object"},
	} {
		if _, errs, code := minca(t, strings.Replace(unsigned, c.from, c.to, 1), "sign", "--key", keyFile); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("sign %s: %d %s", c.to, code, errs)
		}
	}
	// Shape refusal on signing.
	if _, errs, code := minca(t, strings.Replace(unsigned, `"seq":0`, `"seq":-1`, 1), "sign", "--key", keyFile); code != 2 || !strings.Contains(errs, "shape/seq") {
		t.Fatalf("bad unsigned: %d %s", code, errs)
	}
}

func TestVerifySpecExampleAndInputs(t *testing.T) {
	v := specVersion(t)
	out, _, code := minca(t, v, "verify")
	if code != 0 || out != `{"id":"bvtkn4kg5z6qhfqvovhxypxvm767aqz6llyd67wztupdwixpfl7xa","ok":true}`+"\n" {
		t.Fatalf("§3.4: %d %q", code, out)
	}
	// Pretty-printed over several lines is one value.
	var pretty bytes.Buffer
	json.Indent(&pretty, []byte(v), "", "  ")
	if out, _, code := minca(t, pretty.String(), "verify"); code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("pretty: %d %q", code, out)
	}
	cases := map[string]string{
		"[]":                      "shape/object",
		"not json":                "json/syntax",
		`{"id":"x"}`:              "shape/member",
		`{"a":1,"a":1}`:           "json/duplicate",
		strings.Repeat("[", 2000): "json/depth",
	}
	for in, code := range cases {
		// Alone, a value that is not JSON is input verify cannot read:
		// exit 2; beside a version, a refused one: exit 1. Its line says
		// why either way.
		want := 1
		if strings.HasPrefix(code, "json/") {
			want = 2
		}
		out, _, exit := minca(t, in, "verify")
		if exit != want || !strings.Contains(out, `"reason":"`+code+`"`) {
			t.Errorf("%.30q: exit %d %q, want %d and %s", in, exit, out, want, code)
		}
		if !strings.Contains(in, "\n") && !strings.HasPrefix(in, "[[") {
			var one bytes.Buffer
			json.Compact(&one, []byte(v))
			out, _, exit = minca(t, one.String()+"\n"+in+"\n", "verify")
			if exit != 1 || !strings.Contains(out, `"reason":"`+code+`"`) || !strings.Contains(out, `"ok":true`) {
				t.Errorf("%.30q after a version: exit %d %q, want 1 and %s", in, exit, out, code)
			}
		}
	}
	if out, _, code := minca(t, "", "verify"); code != 0 || out != "" {
		t.Fatalf("empty input: %d %q", code, out)
	}
	// The §3.4 version is not loose: it has a space.
	if out, _, code := minca(t, v, "verify", "--loose", "sys.invitation"); code != 1 || !strings.Contains(out, "loose/member") {
		t.Fatalf("--loose: %d %q", code, out)
	}
}

func TestUsage(t *testing.T) {
	if _, errs, code := minca(t, "", "nope"); code != 2 || !strings.Contains(errs, "unknown verb") {
		t.Fatalf("unknown verb: %d", code)
	}
	if _, _, code := minca(t, ""); code != 2 {
		t.Fatalf("no verb: %d", code)
	}
	for _, v := range verbs() {
		if _, _, code := minca(t, "", v.name, "--help"); code != 0 {
			t.Errorf("minca %s --help: exit %d", v.name, code)
		}
	}
	if _, _, code := minca(t, "", "key", "owner", "did:web:x"); code != 2 {
		t.Fatal("key owner of a non did:key")
	}
	if _, _, code := minca(t, "", "sign"); code != 2 {
		t.Fatal("sign without --key")
	}
}
