package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/node"
)

// statsOf is `store stats` of a store, without its change count (the
// changes a store logged on the way, not what it holds).
func statsOf(d *device, store string) map[string]any {
	d.t.Helper()
	var st map[string]any
	if err := json.Unmarshal([]byte(d.mustRun("store", "stats", "--store", store)), &st); err != nil {
		d.t.Fatal(err)
	}
	delete(st, "changes")
	return st
}

// A backup of a node restores whole (docs/stores.md, Geneses): into every
// kind of store (pebble, sqlite, folder, S3), the restored store holds
// what the node held — the same
// versions, stats and spaces' geneses — passes `store check` (its versions
// judged again against their spaces' access histories), shows each space,
// and takes a new write; and restored into a new node of the account, the
// node keeps the spaces again, reads every record, opens the private ones
// and writes.
func TestBackupRestoresWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := &device{t: t, cache: filepath.Join(dir, "cache")}
	a := filepath.Join(dir, "a")
	d.mustRun("init", "--dir", a)
	pub := jsonField(t, d.mustRun("space", "create", "Groceries", "--roles", `{"writer":[{"cmd":"/record"}]}`, "--dir", a), "id")
	priv := jsonField(t, d.mustRun("space", "create", "Diary", "--private", "--dir", a), "id")
	key := jsonField(t, runIn(t, `{"text":"Buy milk"}`, "put", pub, "app.todo", "--dir", a), "key")
	runIn(t, `{"text":"Buy oat milk"}`, "put", pub, "app.todo", "--key", key, "--dir", a) // the first one a stub now
	entry := jsonField(t, runIn(t, `{"text":"Dear diary"}`, "put", priv, "app.entry", "--dir", a), "key")
	d.mustRun("space", "invite", pub, "--role", "writer", "--dir", a)
	carrier := strings.TrimSpace(d.mustRun("keygen", "--out", filepath.Join(dir, "carrier.key")))
	d.mustRun("carrier", "add", carrier, "--name", "box", "--dir", a)

	backup := "folder:" + filepath.Join(dir, "backup")
	d.mustRun("backup", "--to", backup, "--dir", a)
	orig := "pebble:" + filepath.Join(a, "store")
	want, wantStats := d.exported(orig), statsOf(d, orig)
	if strings.Contains(strings.Join(d.exported(backup), "\n"), "Dear diary") {
		t.Fatal("the backup holds a private body in the clear")
	}

	me := filepath.Join(a, node.AccountKeyName)
	// Every kind of store a restore can make (memory: lasts one command,
	// so none holds a restore to check): pebble, sqlite, a folder and a
	// bucket.
	s3 := newFakeS3(t, nil)
	for _, u := range []string{"pebble:" + filepath.Join(dir, "r1"), "sqlite:" + filepath.Join(dir, "r2.db"), "folder:" + filepath.Join(dir, "r3"), s3.url("restored")} {
		d.mustRun("restore", "--from", backup, "--store", u)
		if got := d.exported(u); !slices.Equal(got, want) {
			t.Errorf("%s: store export differs from the node's:\n%s\nwant\n%s", u, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if got := statsOf(d, u); !mapsEqual(got, wantStats) {
			t.Errorf("%s: store stats %v, want %v", u, got, wantStats)
		}
		if out, errs, code := d.minca("", "store", "check", "--store", u); code != 0 {
			t.Errorf("%s: store check: exit %d\n%s%s", u, code, out, errs)
		}
		for _, sp := range []string{pub, priv} {
			if jsonField(t, d.mustRun("space", "show", "--store", u, sp), "id") != sp {
				t.Errorf("%s: space show %s", u, sp)
			}
		}
		// The public space's state reads the same from the restored
		// store as through the node it was backed up from.
		for _, part := range []string{"show", "members", "roles", "definitions", "history"} {
			if got, want := d.mustRun("space", part, "--store", u, pub), d.mustRun("space", part, pub, "--dir", a); got != want {
				t.Errorf("%s: space %s reads\n%s\nthrough the node\n%s", u, part, got, want)
			}
		}
		// A new write: a version the account signs, imported through
		// the full judge, stands.
		unsigned := `{"space":"` + pub + `","collection":"app.todo","seq":0,"log":{"n":0},"createdAt":"2026-09-26T12:00:00.000Z","body":{"text":"after the restore"}}`
		signed := runIn(t, unsigned, "sign", "--key", me)
		if out := runIn(t, signed, "store", "import", "--store", u); !strings.Contains(out, `"outcome":"stands"`) {
			t.Errorf("%s: a new write after the restore: %s", u, out)
		}
		if out, errs, code := d.minca("", "store", "check", "--store", u); code != 0 {
			t.Errorf("%s: store check after a new write: exit %d\n%s%s", u, code, out, errs)
		}
	}

	// A new device of the account, restored from the backup.
	b := filepath.Join(dir, "b")
	d.mustRun("init", "--dir", b, "--account-key", me)
	d.mustRun("restore", "--from", backup, "--dir", b)
	if got, want := spaceIDs(t, b), spaceIDs(t, a); !slices.Equal(got, want) {
		t.Errorf("the restored node keeps %v, the first %v", got, want)
	}
	// Everything the node reads of its spaces and its account is the
	// first node's: each space's state, the account's carriers.
	for _, sp := range []string{pub, priv} {
		for _, part := range []string{"show", "members", "roles", "definitions", "history"} {
			if got, want := d.mustRun("space", part, sp, "--dir", b), d.mustRun("space", part, sp, "--dir", a); got != want {
				t.Errorf("space %s %s: the restored node reads\n%s\nthe first\n%s", part, sp, got, want)
			}
		}
	}
	if got, want := d.mustRun("carrier", "list", "--dir", b), d.mustRun("carrier", "list", "--dir", a); got != want {
		t.Errorf("carrier list: the restored node reads\n%s\nthe first\n%s", got, want)
	}
	if out := d.mustRun("get", pub, key, "--dir", b); !strings.Contains(out, "Buy oat milk") {
		t.Errorf("get after the restore: %s", out)
	}
	var got struct{ Opened struct{ Body map[string]any } }
	if err := json.Unmarshal([]byte(d.mustRun("get", priv, entry, "--dir", b)), &got); err != nil || got.Opened.Body["text"] != "Dear diary" {
		t.Errorf("the restored node does not open the private entry: %v %+v", err, got)
	}
	runIn(t, `{"text":"written after the restore"}`, "put", pub, "app.todo", "--dir", b)
	runIn(t, `{"text":"and here"}`, "put", priv, "app.entry", "--dir", b)
	if out, errs, code := d.minca("", "store", "check", "--store", "pebble:"+filepath.Join(b, "store")); code != 0 {
		t.Errorf("the restored node's store: exit %d\n%s%s", code, out, errs)
	}
}

// runIn runs minca with stdin and fails the test unless it exits 0.
func runIn(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errs, code := minca(t, stdin, args...)
	if code != 0 {
		t.Fatalf("minca %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

// spaceIDs are the ids of the spaces the node in dir keeps, sorted.
func spaceIDs(t *testing.T, dir string) []string {
	t.Helper()
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(mustRun(t, "space", "list", "--dir", dir)), "\n") {
		if l == "" {
			continue // none
		}
		ids = append(ids, jsonField(t, l, "id"))
	}
	slices.Sort(ids)
	return ids
}

func mapsEqual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
