package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node/api"
)

// lockedBuffer is a process's stderr, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveProcess starts `minca serve ARGS…` and returns it, what it printed
// first on stdout (once it serves) and its stderr so far.
func serveProcess(t *testing.T, args ...string) (*exec.Cmd, map[string]any, *lockedBuffer) {
	t.Helper()
	path, env := mincaCommand(t)
	cmd := exec.Command(path, append([]string{"serve"}, args...)...)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v\n%s", err, stderr)
	}
	var ready map[string]any
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		t.Fatalf("serve printed %q", line)
	}
	return cmd, ready, stderr
}

// The first hour, from `minca serve` on a new machine: serve makes the
// node (as init does) and says so; init then changes nothing and says so;
// a second serve names the process holding the directory and that the
// verbs go through it; a port in use is named with the flag; a store verb
// on the node's store names the process and what to do; the verbs go
// through the running node, and say which field a schema refuses.
func TestServeOnANewMachine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := filepath.Join(t.TempDir(), "minca")
	serve, ready, stderr := serveProcess(t, "--dir", dir, "--listen", "127.0.0.1:0")
	account, _ := ready["account"].(string)
	if !strings.HasPrefix(account, "did:key:") || !strings.Contains(stderr.String(), "made a new account") {
		t.Fatalf("serve on a new directory: %v\n%s", ready, stderr)
	}
	for _, f := range []string{"account.key", "session.key", "session.note", api.TokenName} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("serve did not make %s: %v", f, err)
		}
	}
	before, _ := os.ReadFile(filepath.Join(dir, "session.note"))

	out, errs, code := minca(t, "", "init", "--dir", dir)
	if code != 0 || jsonField(t, out, "account") != account || !strings.Contains(errs, "already a node directory") {
		t.Fatalf("init on the serving node's directory: exit %d\n%s%s", code, out, errs)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "session.note")); !bytes.Equal(before, after) {
		t.Error("init changed the session note of a node that needed nothing")
	}

	pid := fmt.Sprintf("process %d", serve.Process.Pid)
	_, errs, code = minca(t, "", "serve", "--dir", dir, "--listen", "127.0.0.1:0")
	if code != exitFailed || !strings.Contains(errs, pid) || !strings.Contains(errs, "go through it") || strings.Contains(errs, "minca/") {
		t.Errorf("a second serve on the directory: exit %d: %s", code, errs)
	}
	addr := strings.TrimPrefix(ready["url"].(string), "http://")
	_, errs, code = minca(t, "", "serve", "--dir", filepath.Join(t.TempDir(), "other"), "--listen", addr)
	if code != exitUsage || !strings.Contains(errs, addr+" is in use") || !strings.Contains(errs, "--listen") {
		t.Errorf("serve on a port in use: exit %d: %s", code, errs)
	}
	_, errs, code = minca(t, "", "store", "stats", "--store", "pebble:"+filepath.Join(dir, "store"))
	if code != exitFailed || !strings.Contains(errs, pid) || !strings.Contains(errs, "stop it first") {
		t.Errorf("a store verb on the serving node's store: exit %d: %s", code, errs)
	}

	// The verbs go through the node running there.
	out, errs, code = minca(t, "", "space", "create", "Groceries", "--dir", dir)
	if code != 0 {
		t.Fatalf("space create: %d %s", code, errs)
	}
	sp := jsonField(t, out, "id")
	// A space's state reads through the node too, in the shapes the
	// --store forms print.
	out, errs, code = minca(t, "", "space", "members", sp, "--dir", dir)
	var member map[string]any
	if err := json.Unmarshal([]byte(out), &member); code != 0 || err != nil || len(member) != 3 || member["root"] != account || member["founder"] != true {
		t.Errorf("space members through the node: exit %d, %q %s", code, out, errs)
	}
	for _, part := range []string{"show", "roles", "definitions", "history"} {
		if _, errs, code := minca(t, "", "space", part, sp, "--dir", dir); code != 0 {
			t.Errorf("space %s through the node: exit %d %s", part, code, errs)
		}
	}
	if out, _, _ = minca(t, "", "space", "show", sp, "--dir", dir); jsonField(t, out, "id") != sp || jsonField(t, out, "name") != "Groceries" {
		t.Errorf("space show through the node: %s", out)
	}
	if _, errs, code = minca(t, "", "watch", "bnosuchspace", "--dir", dir); code != exitNotFound || !strings.Contains(errs, "does not keep the space") {
		t.Errorf("watch of a space the node does not keep: exit %d: %s", code, errs)
	}
	c, err := api.Dial(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	def := map[string]any{"name": "app.todo", "version": 1, "schema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}}
	if _, err := c.Do(context.Background(), "PUT", spacePath(sp, "collections", "app.todo"), def); err != nil {
		t.Fatal(err)
	}
	_, errs, code = minca(t, `{"text":7}`, "put", sp, "app.todo", "--dir", dir)
	if code != exitFailed || !strings.Contains(errs, "write/schema") || !strings.Contains(errs, "body.text: ") {
		t.Errorf("a body the schema refuses: exit %d: %s", code, errs)
	}
	// What put takes is what the README and put --help say: a collection
	// lower case with a dot, a body that is a JSON object of at most 1 MiB
	// (and where big content goes instead).
	big := `{"text":"` + strings.Repeat("x", 1<<20) + `"}`
	for _, c := range []struct{ body, collection, says string }{
		{big, "app.todo", "over 1 MiB"},
		{big, "app.todo", "files"},
		{`{"text":"x"}`, "Todo", "lower case with at least one dot"},
		{`["x"]`, "app.todo", "a JSON object"},
	} {
		if _, errs, code := minca(t, c.body, "put", sp, c.collection, "--dir", dir); code != exitUsage || !strings.Contains(errs, c.says) {
			t.Errorf("put %s of %d bytes: exit %d, not saying %q: %s", c.collection, len(c.body), code, c.says, tail(errs, 300))
		}
	}
	for verb, all := range map[string][]string{
		"put":  {"1 MiB", "files", "lower case with at least one dot", "JSON object"},
		"sign": {"lower case with at least one dot", "JSON object", "a key not the signer's"},
	} {
		help, _, _ := minca(t, "", verb, "--help")
		for _, says := range all {
			if !strings.Contains(strings.Join(strings.Fields(help), " "), says) {
				t.Errorf("%s --help does not say %q", verb, says)
			}
		}
	}
}

// `init --account-key FILE` adds a device to the account: the key is kept
// in the new directory, so every node opened there holds it (`/v1/node`
// says accountKey); another account's key on a node is refused.
func TestInitWithTheAccountKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	account := jsonField(t, mustRun(t, "init", "--dir", a), "account")
	if got := jsonField(t, mustRun(t, "init", "--dir", b, "--account-key", filepath.Join(a, "account.key")), "account"); got != account {
		t.Fatalf("the second device acts for %s, not %s", got, account)
	}
	k, err := identity.ReadKeyFile(filepath.Join(b, "account.key"))
	if err != nil || k.DID() != account {
		t.Fatalf("the second device holds no account key of its own: %v", err)
	}
	// Every node opened there holds it: through the node it opened for
	// the while, as through a running one.
	c, done, err := nodeClient(context.Background(), &stdio{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &bytes.Buffer{}}, b)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	out, err := c.Do(context.Background(), "GET", "/v1/node", nil)
	var n struct {
		AccountKey bool
		Registry   string
	}
	if err != nil || json.Unmarshal(out, &n) != nil || !n.AccountKey || n.Registry == "" {
		t.Fatalf("/v1/node of the second device: %s %v", out, err)
	}
	done()
	other := filepath.Join(dir, "other.pem")
	mustRun(t, "keygen", "--out", other)
	if _, errs, code := minca(t, "", "init", "--dir", b, "--account-key", other); code != exitUsage || !strings.Contains(errs, "acts for the account "+account) {
		t.Fatalf("another account's key: exit %d %s", code, errs)
	}
}
