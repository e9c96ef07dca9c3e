package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minca-go/minca/node"
)

// A second device of the account over peers, as the README's "A second
// device" says: `init --account-key` with the first device's key file,
// then `serve --peer` to the first device. The second device follows the
// whole account: the account's spaces arrive (a public one and a private
// one, opened), it reads the first device's records through its own node,
// and what it writes reaches the first.
func TestSecondDeviceByAccountKeyOverPeers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	desktop, laptop := filepath.Join(dir, "desktop"), filepath.Join(dir, "laptop")
	mustRun(t, "init", "--dir", desktop)
	lists := jsonField(t, mustRun(t, "space", "create", "Lists", "--dir", desktop), "id")
	diary := jsonField(t, mustRun(t, "space", "create", "Diary", "--private", "--dir", desktop), "id")
	milk := jsonField(t, runIn(t, `{"text":"Buy milk"}`, "put", lists, "app.todo", "--dir", desktop), "key")
	entry := jsonField(t, runIn(t, `{"text":"Dear diary"}`, "put", diary, "app.entry", "--dir", desktop), "key")
	mustRun(t, "init", "--dir", laptop, "--account-key", filepath.Join(desktop, "account.key"))

	_, ready, desktopLog := serveProcess(t, "--dir", desktop, "--listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0")
	peer, _ := ready["peers"].(string)
	if peer == "" {
		t.Fatalf("serve --peer-listen printed no peers URL: %v", ready)
	}
	_, _, laptopLog := serveProcess(t, "--dir", laptop, "--listen", "127.0.0.1:0", "--peer", peer)

	// reads is whether dir's node reads the record with text, opened
	// where the space is private.
	reads := func(dir, sp, key, text string) bool {
		out, _, code := minca(t, "", "get", sp, key, "--dir", dir)
		if code != 0 {
			return false
		}
		var v struct {
			Body   map[string]any
			Opened struct{ Body map[string]any }
		}
		return json.Unmarshal([]byte(out), &v) == nil && (v.Body["text"] == text || v.Opened.Body["text"] == text)
	}
	eventually := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if ok() {
				return
			}
		}
		out, _, _ := minca(t, "", "peers", "--dir", laptop)
		t.Fatalf("%s: not within 60 s\nthe laptop's peers: %s\nthe laptop said:\n%s\nthe desktop said:\n%s", what, out, tail(laptopLog.String(), 3000), tail(desktopLog.String(), 3000))
	}
	eventually("the laptop reads the desktop's records", func() bool {
		return reads(laptop, lists, milk, "Buy milk") && reads(laptop, diary, entry, "Dear diary")
	})
	if got, want := spaceIDs(t, laptop), spaceIDs(t, desktop); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the laptop keeps %v, the desktop %v", got, want)
	}
	eggs := jsonField(t, runIn(t, `{"text":"Buy eggs"}`, "put", lists, "app.todo", "--dir", laptop), "key")
	more := jsonField(t, runIn(t, `{"text":"Dear diary, again"}`, "put", diary, "app.entry", "--dir", laptop), "key")
	eventually("the desktop reads the laptop's records", func() bool {
		return reads(desktop, lists, eggs, "Buy eggs") && reads(desktop, diary, more, "Dear diary, again")
	})
}

// A program connected to the account by code at the first device's home
// (`minca home` on its directory, `minca connect`), as the README's "A
// second device" says: it holds a records-only note and never the account
// key, so it keeps only the spaces it joins; given an invite by the first
// device, it joins, and over peers reads the first device's records, and
// what it writes there reaches the first device.
func TestProgramByCodeReadsTheFirstDevicesRecords(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	desktop, prog := filepath.Join(dir, "desktop"), filepath.Join(dir, "program")
	mustRun(t, "init", "--dir", desktop)
	lists := jsonField(t, mustRun(t, "space", "create", "Lists", "--roles", `{"writer":[{"cmd":"/record"}]}`, "--dir", desktop), "id")
	milk := jsonField(t, runIn(t, `{"text":"Buy milk"}`, "put", lists, "app.todo", "--dir", desktop), "key")

	h := startHome(t, desktop)
	c := startConnect(t, h.URL, prog)
	asked := page(t, h, c.Link)
	decide(t, h, asked.ID, "allow")
	fmt.Fprintf(c.stdin, "%s\n", asked.Check)
	if code, out := c.wait(t); code != 0 || jsonField(t, out, "account") != h.Account {
		t.Fatalf("connect: exit %d %s\n%s", code, out, c.stderr)
	}
	if said := "Connected to " + h.Account + ` ("Leif", as the home names it), records only`; !strings.Contains(c.stderr.String(), said) {
		t.Errorf("connect did not say %q:\n%s", said, c.stderr)
	}
	h.cmd.Process.Signal(syscall.SIGTERM)
	h.cmd.Wait()
	if _, err := os.Stat(filepath.Join(prog, node.AccountKeyName)); err == nil {
		t.Fatal("a program connected by code holds the account key")
	}
	if ids := spaceIDs(t, prog); slices.Contains(ids, lists) {
		t.Fatalf("the program keeps the space before it joins it: %v", ids)
	}

	invite := jsonField(t, mustRun(t, "space", "invite", lists, "--role", "writer", "--dir", desktop), "invite")
	mustRun(t, "space", "join", invite, "--dir", prog)
	_, ready, desktopLog := serveProcess(t, "--dir", desktop, "--listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0")
	_, _, progLog := serveProcess(t, "--dir", prog, "--listen", "127.0.0.1:0", "--peer", ready["peers"].(string))
	reads := func(dir, key, text string) bool {
		out, _, code := minca(t, "", "get", lists, key, "--dir", dir)
		return code == 0 && strings.Contains(out, `"text":"`+text+`"`)
	}
	eventually := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if ok() {
				return
			}
		}
		t.Fatalf("%s: not within 60 s\nthe program said:\n%s\nthe desktop said:\n%s", what, tail(progLog.String(), 3000), tail(desktopLog.String(), 3000))
	}
	eventually("the program reads the desktop's record", func() bool { return reads(prog, milk, "Buy milk") })
	eggs := jsonField(t, runIn(t, `{"text":"Buy eggs"}`, "put", lists, "app.todo", "--dir", prog), "key")
	eventually("the desktop reads the program's record", func() bool { return reads(desktop, eggs, "Buy eggs") })
}
