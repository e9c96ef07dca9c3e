package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/minca-go/minca/store"
)

// Every verb's one-line error (issue 12): for a missing store, a damaged
// Pebble or SQLite store, a bad segment, an unreachable S3 server, missing
// S3 credentials and a locked store, the last line on stderr is
// "minca VERB: " and then the store, named once, and what is wrong, named
// once — no package prefixes, no sentinel's text repeated, no stack — and
// the exit code is the contract's.
//
// The stores are named as a person names them, relative to the working
// directory: minca runs as a process there (mincaProcess), with its
// cache directory set as a person's is (XDG_CACHE_HOME), so this test
// changes neither for the tests running in parallel.
func TestErrorLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := func(p string) string { return filepath.Join(dir, p) }
	env := withEnv([]string{"XDG_CACHE_HOME=" + in("cache")})
	must := func(args ...string) {
		t.Helper()
		if _, errs, code := mincaProcess(t, dir, env, "", args...); code != 0 {
			t.Fatalf("minca %s: exit %d\n%s", strings.Join(args, " "), code, errs)
		}
	}
	v := versionsFile(t, dir, "v.jsonl", 30, 1)
	for _, u := range []string{"pebble:p", "pebble:p2", "pebble:pm", "sqlite:sq.db", "folder:fs"} {
		must("store", "import", "--judge", "roots", "--store", u, v)
	}
	// Damage: a MANIFEST cut short, a SQLite page overwritten, a segment
	// with a byte flipped.
	ms, _ := filepath.Glob(in("pm/MANIFEST-*"))
	fi, err := os.Stat(ms[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(ms[0], fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(in("sq.db"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff", 8)), 4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	must("backup", "--store", "pebble:p", "--to", "folder:synced")
	segs := segmentFiles(t, in("synced"))
	data, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(segs[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	seg := regexp.QuoteMeta("segments/"+filepath.Base(filepath.Dir(segs[0]))+"/"+filepath.Base(segs[0])) + ": segment/checksum: the checksum does not match the content [(]torn, partial or altered[)]; it held 30 versions by its trailer"
	fsSegs := segmentFiles(t, in("fs")) // the folder store's only segment, bad too
	if data, err = os.ReadFile(fsSegs[0]); err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(fsSegs[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	fsSeg := regexp.QuoteMeta(strings.TrimPrefix(filepath.ToSlash(fsSegs[0]), filepath.ToSlash(in("fs"))+"/")) + ": segment/checksum: .*; it held 30 versions by its trailer"
	// Another device, with an index of its own, reads the folder store.
	env = withEnv([]string{"XDG_CACHE_HOME=" + in("cache2")})

	// S3: a server that answers (gofakes3), and a port nobody listens on:
	// port 1, privileged, where no test server can be; a port freed by
	// closing a listener can be taken by the next test's server before
	// it is dialled.
	fake := newFakeS3(t, nil)
	refused := "http://127.0.0.1:1"
	down := "s3://bkt/p?region=us-east-1&path-style=true&endpoint=" + refused
	// A store held open by another opener.
	held, err := store.Open(context.Background(), "pebble:"+in("p"), &store.Options{Judge: defaultJudge()})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	// Held by this process: minca, another process, names it.
	locked := fmt.Sprintf(`store pebble:p: locked: open in process %d \([^)]+\)`, os.Getpid())
	const manifest = `store pm: damaged: MANIFEST-\d+ is cut short: \d+ bytes, \d+ when the store was last opened or closed`
	const sqliteDamage = `store sqlite:sq.db: damaged: database disk image is malformed \(11\)`
	unreachable := `store s3://bkt/p: get minca-store.json: ` + regexp.QuoteMeta(refused) + ` unreachable after \d+ attempts in \S+: dial tcp \S+: connect: connection refused`
	for _, c := range []struct {
		args []string
		code int
		line string // a regexp of the last line on stderr, after "minca VERB: "
	}{
		{[]string{"store", "get", "--store", "dbb", "s", "k"}, exitNotFound, `no store at dbb`},
		{[]string{"store", "stats", "--store", "sqlite:dbb"}, exitNotFound, `no store at sqlite:dbb`},
		{[]string{"store", "export", "--store", "folder:dbb"}, exitNotFound, `no store at folder:dbb`},
		{[]string{"restore", "--from", "folder:dbb", "--store", "r"}, exitNotFound, `no store at folder:dbb`},
		{[]string{"store", "stats", "--store", fake.url("nothing")}, exitNotFound, `no store at ` + regexp.QuoteMeta(fake.url("nothing")) + `: no minca-store.json there`},

		{[]string{"store", "stats", "--store", "pm"}, exitFailed, manifest},
		{[]string{"store", "get", "--store", "pm", "s", "k"}, exitFailed, manifest},
		{[]string{"store", "history", "--store", "pm", "s", "k"}, exitFailed, manifest},
		{[]string{"store", "export", "--store", "pm"}, exitFailed, manifest},
		{[]string{"store", "import", "--judge", "roots", "--store", "pm", v}, exitFailed, manifest},
		{[]string{"backup", "--store", "pm", "--to", "folder:b"}, exitFailed, manifest},
		{[]string{"store", "stats", "--store", "sqlite:sq.db"}, exitFailed, sqliteDamage},
		{[]string{"store", "export", "--store", "sqlite:sq.db"}, exitFailed, sqliteDamage},
		{[]string{"store", "import", "--judge", "roots", "--store", "sqlite:sq.db", v}, exitFailed, sqliteDamage},

		{[]string{"restore", "--from", "folder:synced", "--store", "r"}, exitFailed, `blob store folder:synced: bad segment ` + seg},
		{[]string{"store", "stats", "--store", "folder:fs"}, exitFailed, `store folder:fs: bad segment ` + fsSeg + ` \(what it held is missing from this answer\)`},

		{[]string{"store", "stats", "--store", down, "--connect-timeout", "2s"}, exitUnreachable, unreachable},
		{[]string{"backup", "--store", "pebble:p2", "--to", down, "--connect-timeout", "2s"}, exitUnreachable, "blob " + unreachable},

		{[]string{"store", "import", "--judge", "roots", "--store", "pebble:p", v}, exitFailed, locked},
		{[]string{"store", "get", "--store", "pebble:p", "s", "k"}, exitFailed, locked},
		{[]string{"backup", "--store", "pebble:p", "--to", "folder:b"}, exitFailed, locked},
	} {
		lineOK(t, dir, env, c.args, c.code, c.line)
	}

	// No credentials anywhere: found before any request is sent.
	env = withEnv([]string{"XDG_CACHE_HOME=" + in("cache2")}, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
	nocreds := `store s3://bkt/p: no AWS credentials: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE`
	lineOK(t, dir, env, []string{"store", "stats", "--store", fake.url("p")}, exitUsage, nocreds)
	lineOK(t, dir, env, []string{"restore", "--from", fake.url("p"), "--store", "r"}, exitUsage, "blob "+nocreds)
}

// lineOK runs minca as a process in dir with env, and checks its exit
// code and the last line on stderr.
func lineOK(t *testing.T, dir string, env []string, args []string, code int, line string) {
	t.Helper()
	verb := args[0]
	if verb == "store" {
		verb += " " + args[1]
	}
	_, errs, got := mincaProcess(t, dir, env, "", args...)
	lines := strings.Split(strings.TrimRight(errs, "\n"), "\n")
	last := lines[len(lines)-1]
	re := regexp.MustCompile("^" + regexp.QuoteMeta("minca "+verb+": ") + line + "$")
	if got != code || !re.MatchString(last) {
		t.Errorf("minca %s: exit %d (want %d), last line on stderr\n  %s\nwant\n  %s", strings.Join(args, " "), got, code, last, re)
	}
	for _, bad := range []string{"minca/", "goroutine ", "panic"} {
		if strings.Contains(errs, bad) {
			t.Errorf("minca %s: stderr holds %q:\n%s", strings.Join(args, " "), bad, errs)
		}
	}
}
