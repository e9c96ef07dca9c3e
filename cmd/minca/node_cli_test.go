package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minca-go/minca/node/api"
)

// nodeCLI runs one verb in process and returns stdout and the exit code,
// logging stderr when it fails.
func nodeCLI(t *testing.T, stdin string, args ...string) (string, int) {
	t.Helper()
	out, errs, code := minca(t, stdin, args...)
	if code != 0 {
		t.Logf("minca %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return out, code
}

func jsonField(t *testing.T, out, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not a JSON line: %q", out)
	}
	s, _ := m[name].(string)
	return s
}

func TestNodeVerbs(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	if _, c := nodeCLI(t, "", "init", "--dir", a); c != 0 {
		t.Fatal("init")
	}
	out, _ := nodeCLI(t, "", "init", "--dir", b)
	bob := jsonField(t, out, "account")
	out, c := nodeCLI(t, "", "space", "create", "club", "--dir", a, "--roles", `{"writer":[{"cmd":"/record"}]}`)
	if c != 0 {
		t.Fatal("space create")
	}
	sp := jsonField(t, out, "id")
	out, c = nodeCLI(t, `{"text":"milk"}`, "put", sp, "app.todo", "--dir", a)
	if c != 0 || jsonField(t, out, "collection") != "app.todo" || jsonField(t, out, "signature") == "" {
		t.Fatalf("put printed %q", out)
	}
	key := jsonField(t, out, "key")
	if out, c = nodeCLI(t, "", "get", sp, key, "--dir", a); c != 0 || !strings.Contains(out, "milk") {
		t.Fatalf("get: %d %q", c, out)
	}
	if _, c = nodeCLI(t, `{"text":"oat milk"}`, "put", sp, "app.todo", "--key", key, "--dir", a); c != 0 {
		t.Fatal("put --key")
	}
	if out, c = nodeCLI(t, "", "history", sp, key, "--dir", a); c != 0 || strings.Count(out, `"standing"`) != 2 {
		t.Fatalf("history: %q", out)
	}
	if _, c = nodeCLI(t, "", "delete", sp, key, "--dir", a); c != 0 {
		t.Fatal("delete")
	}
	if _, c = nodeCLI(t, "", "get", sp, "nothing.here", "--dir", a); c != 3 {
		t.Fatalf("get of a record not held: exit %d, want 3", c)
	}
	if _, c = nodeCLI(t, `{`, "put", sp, "app.todo", "--dir", a); c != 2 {
		t.Fatalf("put of bad JSON: exit %d, want 2", c)
	}
	out, c = nodeCLI(t, "", "space", "invite", sp, "--role", "writer", "--dir", a)
	inv := jsonField(t, out, "invite")
	if c != 0 || !strings.HasPrefix(inv, "minca-invite:") {
		t.Fatalf("invite: %q", out)
	}
	if _, c = nodeCLI(t, "", "space", "join", inv, "--dir", b); c != 0 {
		t.Fatal("join")
	}
	if out, c = nodeCLI(t, "", "space", "members", sp, "--dir", b); c != 0 || !strings.Contains(out, bob) {
		t.Fatalf("members: %q", out)
	}
	if _, c = nodeCLI(t, `{"by":"bob"}`, "put", sp, "app.todo", "--dir", b); c != 0 {
		t.Fatal("bob's put")
	}
	if out, c = nodeCLI(t, "", "query", sp, `{"collection":"app.todo","where":{"by":"bob","@createdBy":"$me"}}`, "--dir", b); c != 0 || strings.Count(out, `"by":"bob"`) != 1 {
		t.Fatalf("query: %d %q", c, out)
	}
	if _, errs, c := minca(t, "", "query", sp, `{"collection":"app.todo","where":{"by":{"$near":1}}}`, "--dir", b); c != 2 || !strings.Contains(errs, "where.by.$near") {
		t.Fatalf("a malformed query: exit %d, %q; want 2 naming where.by.$near", c, errs)
	}
	if out, c = nodeCLI(t, "", "space", "list", "--dir", b); c != 0 || !strings.Contains(out, sp) {
		t.Fatalf("space list: %q", out)
	}
	if _, c = nodeCLI(t, "", "space", "leave", sp, "--dir", b); c != 0 {
		t.Fatal("leave")
	}
	if out, _ = nodeCLI(t, "", "space", "list", "--dir", b); strings.Contains(out, sp) {
		t.Fatalf("after leaving, space list: %q", out)
	}
	if out, c = nodeCLI(t, "", "watch", sp, "--after", "0", "--count", "3", "--dir", a); c != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, `"cursor"`) {
		t.Fatalf("watch: %d %q", c, out)
	}
	if _, c = nodeCLI(t, "", "space", "assign", sp, bob, "--role", "nosuchrole", "--dir", a); c != 1 {
		t.Fatalf("assigning a role that does not exist: exit %d, want 1", c)
	}
	// A live query: watch opens the node (none runs) and serves its API
	// meanwhile, so the puts go through it; the first record entering
	// after the query started ends it.
	type result struct {
		out  string
		code int
	}
	done := make(chan result, 1)
	go func() {
		out, _, c := minca(t, "", "watch", sp, "--query", `{"collection":"app.live"}`, "--count", "1", "--dir", a)
		done <- result{out, c}
	}()
	deadline := time.After(2 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(a, api.AddressName)); err == nil {
			minca(t, `{"n":1}`, "put", sp, "app.live", "--dir", a)
		}
		select {
		case r := <-done:
			var ch struct {
				Kind  string
				Entry struct{ Collection string }
			}
			if err := json.Unmarshal([]byte(r.out), &ch); r.code != 0 || err != nil || ch.Kind != "enter" || ch.Entry.Collection != "app.live" {
				t.Fatalf("watch --query: exit %d, %q", r.code, r.out)
			}
			return
		case <-deadline:
			t.Fatal("watch --query saw nothing in 2 minutes")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// startServe starts `minca serve` in a process and returns it with its URL.
func startServe(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	path, env := mincaCommand(t)
	cmd := exec.Command(path, "serve", "--dir", dir, "--listen", "127.0.0.1:0")
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("serve printed nothing: %v", err)
	}
	var ready struct{ URL string }
	if err := json.Unmarshal([]byte(line), &ready); err != nil || ready.URL == "" {
		t.Fatalf("serve printed %q", line)
	}
	return cmd, ready.URL
}

// Killed with SIGKILL under write load, the node loses nothing it
// acknowledged; SIGTERM closes it cleanly (exit 143, its address file
// removed).
func TestServeKilledUnderLoadLosesNothingAcknowledged(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	if _, c := nodeCLI(t, "", "init", "--dir", dir); c != 0 {
		t.Fatal("init")
	}
	out, _ := nodeCLI(t, "", "space", "create", "load", "--dir", dir)
	sp := jsonField(t, out, "id")
	tok, _ := api.Token(dir)
	cmd, url := startServe(t, dir)
	c := api.NewClient(url, tok)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	acked := map[string]string{} // key → id
	// The kill comes once the load is under way, whatever the machine's
	// speed: killAfter writes acknowledged, with the writers still
	// writing. A writer that fails before the kill ends the wait too.
	const killAfter = 300
	underWay := make(chan struct{})
	failed := make(chan error, 8)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				b, err := c.Do(ctx, "POST", "/v1/spaces/"+sp+"/records", map[string]any{"collection": "app.load", "body": map[string]any{"w": w, "i": i}})
				if err != nil {
					failed <- err
					return
				}
				var v struct{ ID, Key string }
				json.Unmarshal(b, &v)
				mu.Lock()
				acked[v.Key] = v.ID
				if len(acked) == killAfter {
					close(underWay)
				}
				mu.Unlock()
			}
		}()
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	select {
	case <-underWay:
	case err := <-failed:
		cmd.Process.Kill()
		t.Fatalf("a write failed before the kill, with %d acknowledged: %v", count(), err)
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("%d writes acknowledged in 2 minutes, %d wanted before the kill", count(), killAfter)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	cancel()
	wg.Wait()
	cmd, url = startServe(t, dir)
	c = api.NewClient(url, tok)
	for k, id := range acked {
		b, err := c.Do(context.Background(), "GET", "/v1/spaces/"+sp+"/records/"+k, nil)
		if err != nil || !bytes.Contains(b, []byte(id)) {
			t.Fatalf("acknowledged %s at %s, after the kill: %s %v", id, k, b, err)
		}
	}
	t.Logf("%d acknowledged writes survived SIGKILL", len(acked))
	// Each has its event, made again from the change log after the kill.
	want := map[string]bool{}
	for _, id := range acked {
		want[id] = true
	}
	ectx, ecancel := context.WithTimeout(context.Background(), 2*time.Minute)
	got := 0
	var last string
	err := c.Events(ectx, "/v1/spaces/"+sp+"/events?after=0", func(data json.RawMessage) bool {
		var ev struct{ ID, Cursor string }
		json.Unmarshal(data, &ev)
		got++
		last = string(data)
		delete(want, ev.ID)
		return len(want) > 0
	})
	ecancel()
	if len(want) > 0 {
		t.Fatalf("after the kill, %d of %d acknowledged writes have no event (%d events, the last %s; %v)", len(want), len(acked), got, last, err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 143 {
		t.Fatalf("after SIGTERM serve exited %v, want 143 (a clean stop on SIGTERM)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, api.AddressName)); err == nil {
		t.Fatal("serve left its address file behind after a clean stop")
	}
}
