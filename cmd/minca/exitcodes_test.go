package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/engine"
)

// The one mapping from errors to exit codes: the engine's sentinels
// wherever they are wrapped, then the code a verb chose, then 1.
func TestExitCodeMapping(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{fmt.Errorf("store %s: %w", "db", engine.ErrNoStore), exitNotFound},
		{fmt.Errorf("get: %w", engine.ErrNotFound), exitNotFound},
		{failed(fmt.Errorf("history: %w", engine.ErrNotFound)), exitNotFound},
		{fmt.Errorf("blob store: %w", engine.ErrBlobStoreGone), exitNotFound},
		{fmt.Errorf("s3: %w", engine.ErrUnreachable), exitUnreachable},
		{failed(fmt.Errorf("backup: %w", engine.ErrUnreachable)), exitUnreachable},
		{usageError("x: %w", engine.ErrUnreachable), exitUnreachable}, // the sentinel decides
		{fmt.Errorf("segment x: %w", engine.ErrCorrupt), exitFailed},
		{errors.Join(engine.ErrCorrupt, engine.ErrNotFound), exitFailed}, // damage outranks absence
		{usageError("bad flag"), exitUsage},
		{notFound("record"), exitNotFound},
		{quiet(exitFailed), exitFailed},
		{errors.New("disk full"), exitFailed},
		{context.Canceled, exitFailed}, // cancelled but not by a signal
	} {
		if got := exitCodeOf(c.err); got != c.want {
			t.Errorf("%v: exit %d, want %d", c.err, got, c.want)
		}
	}
}

// fixtures are the files the verb table reads.
type fixtures struct {
	dir, key, signed, tampered, unsigned, garbage, store, space, recordKey, def, notJSON string
}

func makeFixtures(t *testing.T) fixtures {
	t.Helper()
	dir := t.TempDir()
	f := fixtures{dir: dir, key: filepath.Join(dir, "me.pem")}
	did, errs, code := minca(t, "", "keygen", "--out", f.key)
	if code != 0 {
		t.Fatal(errs)
	}
	fresh, _, _ := minca(t, "", "key", "fresh", strings.TrimSpace(did))
	f.space, f.recordKey = noteSpace, strings.TrimSpace(fresh)
	unsigned := `{"collection":"app.todo.item","createdAt":"2026-09-26T12:00:00.000Z","space":"` + f.space + `","key":"` + f.recordKey + `","seq":0,"log":{"n":0},"body":{"text":"hi"}}`
	signed, errs, code := minca(t, unsigned, "sign", "--key", f.key)
	if code != 0 {
		t.Fatal(errs)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f.unsigned = write("unsigned.json", unsigned)
	f.signed = write("signed.jsonl", signed)
	f.tampered = write("tampered.jsonl", strings.Replace(signed, `"hi"`, `"ho"`, 1))
	f.garbage = write("garbage.bin", "\x89PNG\r\n\x1a\n\x00\x00binary\nnot json either\n")
	f.notJSON = write("notjson.txt", "{")
	f.def = write("def.json", `{"name":"app.todo.item","schema":{"type":"object","properties":{"text":{"type":"string"}}},"version":1,"topics":["text"]}`)
	f.store = filepath.Join(dir, "db")
	if _, errs, code := minca(t, "", "store", "import", "--judge", "roots", "--store", f.store, f.signed); code != 0 {
		t.Fatal(errs)
	}
	return f
}

// Every verb, on good input, bad usage, unreadable input, a failed check
// and what is not there, exits with the contract's code (docs/cli.md).
func TestVerbExitCodes(t *testing.T) {
	f := makeFixtures(t)
	missing := filepath.Join(f.dir, "nothing.jsonl")
	cases := []struct {
		stdin string
		args  []string
		want  int
	}{
		// No verb, an unknown one, help.
		{"", nil, exitUsage},
		{"", []string{"nope"}, exitUsage},
		{"", []string{"help"}, exitOK},
		{"", []string{"help", "store", "import"}, exitOK},
		{"", []string{"--version"}, exitOK},
		{"", []string{"--log-format", "xml", "canon"}, exitUsage},
		{"", []string{"store"}, exitUsage},
		{"", []string{"store", "nope"}, exitUsage},
		{"", []string{"canon", "--nope"}, exitUsage},

		// canon and cid: the same input, the same codes.
		{`{"b":1,"a":2}`, []string{"canon"}, exitOK},
		{"", []string{"canon", f.signed}, exitOK},
		{`{`, []string{"canon"}, exitUsage},
		{"", []string{"canon", f.notJSON}, exitUsage},
		{"", []string{"canon", missing}, exitUsage},
		{"1\n{\n", []string{"canon", "--lines"}, exitUsage},
		{`{"b":1}`, []string{"cid"}, exitOK},
		{"", []string{"cid", f.signed}, exitOK},
		{`{`, []string{"cid"}, exitUsage},
		{"", []string{"cid", f.notJSON}, exitUsage},
		{"", []string{"cid", "--raw", f.garbage}, exitOK},
		{"", []string{"cid", missing}, exitUsage},

		// keys
		{"", []string{"keygen"}, exitUsage},
		{"", []string{"keygen", "--out", f.key}, exitUsage}, // never overwrites
		{"", []string{"key", "owner", "did:web:example.com"}, exitUsage},
		{"", []string{"key", "fresh"}, exitUsage},

		// sign and verify
		{"", []string{"sign", "--key", f.key, f.unsigned}, exitOK},
		{"", []string{"sign", f.unsigned}, exitUsage},
		{"", []string{"sign", "--key", missing, f.unsigned}, exitUsage},
		{"", []string{"sign", "--key", f.key, f.garbage}, exitUsage},
		{"", []string{"sign", "--key", f.key}, exitUsage}, // nothing to sign
		{"", []string{"verify", f.signed}, exitOK},
		{"", []string{"verify", f.signed, f.signed}, exitOK},
		{"", []string{"verify", f.tampered}, exitFailed},
		{"", []string{"verify", f.signed, f.tampered}, exitFailed},
		{"", []string{"verify", f.garbage}, exitUsage},
		{"", []string{"verify", missing}, exitUsage},
		{"", []string{"verify"}, exitOK}, // empty stdin: nothing to refuse

		// collections and tags
		{"", []string{"collection", "check", f.def}, exitOK},
		{`{"name":"x"}`, []string{"collection", "check"}, exitFailed},
		{"", []string{"collection", "check", f.garbage}, exitUsage},
		{`{"text":1}`, []string{"collection", "validate", "--def", f.def}, exitOK}, // issues are flags, not refusals
		{`{`, []string{"collection", "validate", "--def", f.def}, exitUsage},
		{`{"body":{"text":"x"}}`, []string{"tags", "--space", f.space, "--def", f.def}, exitOK},
		{`{`, []string{"tags", "--space", f.space, "--def", f.def}, exitUsage},
		{"", []string{"tags", "--def", f.def}, exitUsage},

		// notes
		{"", []string{"note", "check", f.signed}, exitFailed}, // a version is no note
		{"", []string{"note", "check", f.garbage}, exitUsage},
		{"", []string{"note", "check"}, exitUsage}, // no note at all

		// store import: refused versions fail the check; garbage is unreadable.
		{"", []string{"store", "import", "--judge", "roots", "--store", "memory:", f.signed}, exitOK},
		{"", []string{"store", "import", "--judge", "roots", f.signed, "--store", "memory:"}, exitOK},
		{"", []string{"store", "import", "--judge", "roots", "--store", "memory:", f.tampered}, exitFailed},
		{"", []string{"store", "import", "--judge", "roots", "--store", "memory:", f.signed, f.tampered}, exitFailed},
		{"", []string{"store", "import", "--judge", "roots", "--store", "memory:", f.garbage}, exitUsage},
		{"", []string{"store", "import", "--judge", "roots", "--store", "memory:", missing}, exitUsage},
		{"", []string{"store", "import", "--judge", "roots", f.signed}, exitUsage}, // no --store
		{"", []string{"store", "import", "--judge", "roots", "--store", "nosuch://x", f.signed}, exitUsage},

		// store reads: a record not held is not found.
		{"", []string{"store", "get", "--store", f.store, f.space, f.recordKey}, exitOK},
		{"", []string{"store", "get", f.space, f.recordKey, "--store", f.store}, exitOK},
		{"", []string{"store", "get", "--store", f.store, f.space, "nokey"}, exitNotFound},
		{"", []string{"store", "get", "--store", f.store, f.space}, exitUsage},
		{"", []string{"store", "history", "--store", f.store, f.space, f.recordKey}, exitOK},
		{"", []string{"store", "history", "--store", f.store, f.space, "nokey"}, exitNotFound},
		{"", []string{"store", "export", "--store", f.store}, exitOK},
		{"", []string{"store", "export", "--store", f.store, "extra"}, exitUsage},
		{"", []string{"store", "stats", "--store", f.store}, exitOK},
		{"", []string{"store", "check", "--judge", "roots", "--store", f.store}, exitOK},

		// blob stores: usage.
		{"", []string{"backup", "--store", f.store}, exitUsage},
		{"", []string{"restore", "--from", "ftp://x", "--store", f.store}, exitUsage},
		{"", []string{"mirror", "--store", f.store, "--to", "folder:" + f.dir, "extra"}, exitUsage},
		{"", []string{"compact", "--store", f.store}, exitUsage},
	}
	for _, c := range cases {
		out, errs, code := minca(t, c.stdin, c.args...)
		if code != c.want {
			t.Errorf("minca %s: exit %d, want %d\nstdout: %.300s\nstderr: %.300s", strings.Join(c.args, " "), code, c.want, out, errs)
		}
		if strings.Contains(errs, "goroutine ") || strings.Contains(errs, "panic") {
			t.Errorf("minca %s: a stack trace on stderr:\n%s", strings.Join(c.args, " "), errs)
		}
	}
}

// --help and `minca help VERB` print to stdout and exit 0, for every verb
// and subverb; flags are shown as --name.
func TestHelpEverywhere(t *testing.T) {
	var paths [][]string
	for _, v := range verbs() {
		paths = append(paths, []string{v.name})
	}
	for _, v := range verbs() {
		verb := v.name
		for _, s := range subverbsOf(verb) {
			paths = append(paths, []string{verb, s.name})
		}
	}
	for _, p := range paths {
		for _, h := range []string{"--help", "-h"} {
			out, errs, code := minca(t, "", append(append([]string{}, p...), h)...)
			if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: minca "+strings.Join(p, " ")) {
				t.Errorf("minca %v %s: exit %d, stdout %.80q, stderr %q", p, h, code, out, errs)
				continue
			}
			if strings.Contains(out, "\n  -") && !strings.Contains(out, "\n  --") {
				t.Errorf("minca %v %s shows a flag with one dash:\n%s", p, h, out)
			}
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "  -") && !strings.HasPrefix(l, "  --") {
					t.Errorf("minca %v %s: %q", p, h, l)
				}
				// A flag's argument is named in capitals (--store URL),
				// never by its Go type (--key string).
				if f := strings.Fields(l); strings.HasPrefix(l, "  --") && len(f) > 1 && h == "--help" &&
					len(l) > 24 && l[len(f[0])+2] == ' ' && l[len(f[0])+3] != ' ' && strings.ToUpper(f[1]) != f[1] {
					t.Errorf("minca %v: the flag's argument is not in capitals: %q", p, l)
				}
			}
			help, _, code := minca(t, "", append([]string{"help"}, p...)...)
			if code != 0 || help != out {
				t.Errorf("minca help %v: exit %d, not the same text as %s", p, code, h)
			}
		}
	}
	// The verbs with subverbs list them on stdout when asked.
	for _, v := range []string{"store", "key", "note", "collection", "bench"} {
		if out, errs, code := minca(t, "", v, "--help"); code != 0 || errs != "" || !strings.Contains(out, "SUBVERB") {
			t.Errorf("minca %s --help: %d %q %q", v, code, out, errs)
		}
	}
	out, errs, code := minca(t, "")
	if code != exitUsage || out != "" || !strings.Contains(errs, "usage: minca") {
		t.Errorf("minca alone: exit %d, stdout %q", code, out)
	}
	out, errs, code = minca(t, "", "--help")
	if code != 0 || errs != "" || !strings.Contains(out, "Exit codes:") || !strings.Contains(out, "MINCA_STORE") {
		t.Errorf("minca --help: exit %d %q %q", code, out, errs)
	}
	if out, _, _ := minca(t, "", "store", "import", "--judge", "roots", "--help"); !strings.Contains(out, "--store URL") || !strings.Contains(out, "$MINCA_STORE") || !strings.Contains(out, "130") || !strings.Contains(out, "143") {
		t.Errorf("store import --help:\n%s", out)
	}
}

// Flags may follow arguments; "--" ends them, so an argument may start
// with a dash; "-" is stdin.
func TestFlagsAfterArguments(t *testing.T) {
	f := makeFixtures(t)
	a, _, c1 := minca(t, "", "store", "get", "--store", f.store, f.space, f.recordKey)
	b, _, c2 := minca(t, "", "store", "get", f.space, "--store", f.store, f.recordKey)
	c, _, c3 := minca(t, "", "store", "get", f.space, f.recordKey, "--store="+f.store)
	if c1 != 0 || c2 != 0 || c3 != 0 || a != b || a != c {
		t.Fatalf("store get with flags around arguments: %d %d %d", c1, c2, c3)
	}
	if _, errs, code := minca(t, "", "store", "get", "--store", f.store, "--", f.space, "-nokey"); code != exitNotFound {
		t.Fatalf("-- then a dashed argument: exit %d %s", code, errs)
	}
	if _, _, code := minca(t, "", "store", "get", "--store", f.store, f.space, "-nokey"); code != exitUsage {
		t.Fatalf("a dashed argument without --: exit %d, want a usage error", code)
	}
	signed, _ := os.ReadFile(f.signed)
	x, _, c1 := minca(t, "", "verify", f.signed, "--loose", "")
	y, _, c2 := minca(t, string(signed), "verify", "-")
	if c1 != 0 || c2 != 0 || x != y {
		t.Fatalf("verify FILE and verify - differ: %q %q", x, y)
	}
	// A bool flag after the argument does not swallow it.
	p, _, c1 := minca(t, "", "cid", f.signed, "--raw")
	q, _, c2 := minca(t, string(signed), "cid", "--raw")
	if c1 != 0 || c2 != 0 || p != q {
		t.Fatalf("cid FILE --raw: %q, stdin: %q", p, q)
	}
}

// MINCA_STORE is --store's default; a --store given wins. (minca runs as
// a process, with MINCA_STORE in its environment alone.)
func TestMincaStoreEnv(t *testing.T) {
	t.Parallel()
	f := makeFixtures(t)
	env := withEnv([]string{"MINCA_STORE=" + f.store})
	if out, errs, code := mincaProcess(t, f.dir, env, "", "store", "get", f.space, f.recordKey); code != 0 || !strings.Contains(out, f.recordKey) {
		t.Fatalf("store get with MINCA_STORE: %d %s", code, errs)
	}
	if out, _, code := mincaProcess(t, f.dir, env, "", "store", "stats", "--store", "memory:"); code != 0 || !strings.Contains(out, `"versions":0`) {
		t.Fatalf("--store did not win over MINCA_STORE: %d %s", code, out)
	}
}

// --log-format json (or MINCA_LOG_FORMAT=json) makes every log line on
// stderr a JSON object; text is the default.
func TestLogFormat(t *testing.T) {
	t.Parallel()
	f := makeFixtures(t)
	check := func(errs string, json bool) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if len(lines) == 0 || lines[0] == "" {
			t.Fatal("no log line")
		}
		for _, l := range lines {
			if json != strings.HasPrefix(l, "{") {
				t.Fatalf("json %v: %q", json, l)
			}
		}
	}
	_, errs, code := minca(t, "", "store", "import", "--judge", "roots", "--store", "memory:", f.signed, "--log-format", "json")
	if code != 0 || !strings.Contains(errs, `"msg":"imported 1 version in `) {
		t.Fatalf("--log-format json: %d %s", code, errs)
	}
	// Run again, it says that it took in nothing new.
	db := "pebble:" + filepath.Join(t.TempDir(), "db")
	for i, want := range []string{"; 1 new, 0 already held", "; 0 new, 1 already held"} {
		if _, errs, code := minca(t, "", "store", "import", "--judge", "roots", "--store", db, f.signed); code != 0 || !strings.Contains(errs, want) {
			t.Fatalf("import %d: %d %s", i+1, code, errs)
		}
	}
	check(errs, true)
	_, errs, _ = minca(t, "", "--log-format=json", "store", "import", "--judge", "roots", "--store", "memory:", f.tampered)
	check(errs, true)
	// MINCA_LOG_FORMAT=json, in minca's environment alone (a process).
	env := withEnv([]string{"MINCA_LOG_FORMAT=json"})
	_, errs, _ = mincaProcess(t, f.dir, env, "", "store", "import", "--judge", "roots", "--store", "memory:", f.signed)
	check(errs, true)
	_, errs, _ = mincaProcess(t, f.dir, env, "", "store", "import", "--judge", "roots", "--store", "memory:", f.signed, "--log-format", "text")
	check(errs, false)
	// An error is a JSON record too.
	_, errs, code = mincaProcess(t, f.dir, env, "", "store", "get", "--store", f.store, f.space, "nokey")
	if code != exitNotFound {
		t.Fatal(code)
	}
	check(errs, true)
}

// --version names minca's build and the modules that read and write stores.
func TestVersion(t *testing.T) {
	out, errs, code := minca(t, "", "--version")
	if code != 0 || errs != "" || !strings.HasPrefix(out, "minca ") {
		t.Fatalf("--version: %d %q %q", code, out, errs)
	}
	for _, m := range []string{"go1.", "github.com/cockroachdb/pebble/v2 v", "modernc.org/sqlite v", "github.com/aws/aws-sdk-go-v2 v", "github.com/klauspost/compress v"} {
		if !strings.Contains(out, m) {
			t.Errorf("--version lacks %s:\n%s", m, out)
		}
	}
}
