package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
)

// homeProc is a `minca home` process.
type homeProc struct {
	cmd     *exec.Cmd
	URL     string `json:"url"`
	Relay   string `json:"relay"`
	Account string `json:"account"`
}

// startHome starts `minca home` on DIR and a free loopback port.
func startHome(t *testing.T, dir string, args ...string) *homeProc {
	t.Helper()
	path, env := mincaCommand(t)
	cmd := exec.Command(path, append([]string{"home", "--dir", dir, "--listen", "127.0.0.1:0", "--name", "Leif"}, args...)...)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	h := &homeProc{cmd: cmd}
	if err != nil || json.Unmarshal([]byte(line), h) != nil || h.URL == "" {
		t.Fatalf("home printed %q (%v)", line, err)
	}
	return h
}

// connectProc is a `minca connect` process, its stdin the person's
// terminal.
type connectProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *syncBuffer
	Link   string `json:"link"`
	Key    string `json:"key"`
}

func startConnect(t *testing.T, home, dir string, args ...string) *connectProc {
	t.Helper()
	path, env := mincaCommand(t)
	cmd := exec.Command(path, append([]string{"connect", home, "--dir", dir, "--no-open", "--name", "agent", "--timeout", "60s"}, args...)...)
	cmd.Env = env
	c := &connectProc{cmd: cmd, stderr: &syncBuffer{}}
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.out = bufio.NewReader(out)
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := c.out.ReadString('\n')
	if err != nil || json.Unmarshal([]byte(line), c) != nil || c.Link == "" {
		t.Fatalf("connect printed %q (%v); stderr:\n%s", line, err, c.stderr)
	}
	return c
}

// wait waits for the process to end and returns its exit code and what
// else it printed on stdout.
func (c *connectProc) wait(t *testing.T) (int, string) {
	t.Helper()
	rest, _ := io.ReadAll(c.out)
	err := c.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(rest)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(rest)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// codeView is the home's JSON for one exchange.
type codeView struct {
	ID, State, Name, Check, Audience, Problem string
}

// page does what the connect page does, over HTTP, with the Origin a
// browser sends: it hands the home the code from the link, follows the
// exchange until the program asked, and returns it.
func page(t *testing.T, h *homeProc, link string) codeView {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	origin := u.Scheme + "://" + u.Host
	req, _ := http.NewRequest("POST", origin+"/connect/code", strings.NewReader(url.Values{"code": {u.Fragment}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	var started struct{ ID string }
	doJSON(t, req, &started)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", origin+"/connect/code/"+started.ID, nil)
		var v codeView
		doJSON(t, req, &v)
		if v.State != "waiting" {
			return v
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no program asked within 30 s")
	return codeView{}
}

// decide posts the person's decision as the page's form does.
func decide(t *testing.T, h *homeProc, id, decision string) codeView {
	t.Helper()
	req, _ := http.NewRequest("POST", h.URL+"/connect/code/"+id, strings.NewReader(url.Values{"decision": {decision}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", h.URL)
	req.Header.Set("Accept", "application/json")
	var v codeView
	doJSON(t, req, &v)
	return v
}

func doJSON(t *testing.T, req *http.Request, v any) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s %s", req.Method, req.URL, res.Status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s %s: %s", req.Method, req.URL, b)
	}
}

// The README's walkthrough, by hand: `minca home` and `minca connect` as
// processes, the person allowing on the page (the page's own form post)
// and typing the check in connect's terminal; then `minca put` writes
// under the granted note, the version verifies, and disconnecting at the
// home revokes the key where the account writes (06 §2.10, §3).
func TestHomeAndConnectByCode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	h := startHome(t, t.TempDir())
	prog := t.TempDir()
	c := startConnect(t, h.URL, prog)
	if !strings.HasPrefix(c.Link, h.URL+"/connect#mc_") {
		t.Fatalf("link %s", c.Link)
	}
	asked := page(t, h, c.Link)
	if asked.State != "asked" || asked.Name != "agent" || len(asked.Check) != 6 {
		t.Fatalf("the home shows %+v", asked)
	}
	if v := decide(t, h, asked.ID, "allow"); v.State != "answered" || v.Audience != c.Key {
		t.Fatalf("after allow: %+v", v)
	}
	if _, err := os.Stat(filepath.Join(prog, "session.note")); err == nil {
		t.Fatal("the program kept its note before the person gave the check")
	}
	fmt.Fprintf(c.stdin, "%s %s\n", asked.Check[:3], asked.Check[3:])
	code, out := c.wait(t)
	var done struct{ Account, Home, Key string }
	if code != 0 || json.Unmarshal([]byte(out), &done) != nil || done.Account != h.Account || done.Home != h.URL+"/connect" || done.Key != c.Key {
		t.Fatalf("connect: exit %d, %q; stderr:\n%s", code, out, c.stderr)
	}

	// The node on the program's directory writes under the note.
	sout, sc := nodeCLI(t, "", "space", "create", "notes", "--dir", prog)
	if sc != 0 {
		t.Fatalf("space create: %d %s", sc, sout)
	}
	sp := jsonField(t, sout, "id")
	vout, vc := nodeCLI(t, `{"text":"hello"}`, "put", sp, "app.note", "-", "--dir", prog)
	if vc != 0 {
		t.Fatalf("put: %d %s", vc, vout)
	}
	var v struct {
		Author string
		Proof  struct {
			Payload struct{ Iss, Aud, Cmd, Sub string }
		}
	}
	if err := json.Unmarshal([]byte(vout), &v); err != nil || v.Author != c.Key || v.Proof.Payload.Iss != h.Account ||
		v.Proof.Payload.Aud != c.Key || v.Proof.Payload.Cmd != "/record" || v.Proof.Payload.Sub != h.Account {
		t.Fatalf("the version: %s", vout)
	}
	if out, code := nodeCLI(t, vout, "verify"); code != 0 || !strings.Contains(out, `"ok":true`) {
		t.Fatalf("verify: %d %s", code, out)
	}

	// The home keeps the connection, and disconnecting revokes the key.
	req, _ := http.NewRequest("GET", h.URL+"/connections", nil)
	req.Header.Set("Accept", "application/json")
	var list struct {
		Connections []struct{ ID, Kind, Audience string }
	}
	doJSON(t, req, &list)
	if len(list.Connections) != 1 || list.Connections[0].Kind != "code" || list.Connections[0].Audience != c.Key {
		t.Fatalf("connections %+v", list)
	}
	req, _ = http.NewRequest("POST", h.URL+"/connections/disconnect", strings.NewReader(url.Values{"id": {list.Connections[0].ID}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	var d struct {
		Revoked []struct {
			Key    string
			Spaces []string
		}
	}
	doJSON(t, req, &d)
	if len(d.Revoked) != 1 || d.Revoked[0].Key != c.Key || len(d.Revoked[0].Spaces) == 0 {
		t.Fatalf("disconnecting revoked %+v", d)
	}

	// SIGTERM ends the home: exit 143.
	h.cmd.Process.Signal(syscall.SIGTERM)
	err := h.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitSIGTERM {
		t.Fatalf("home after SIGTERM: %v", err)
	}
}

// 06 §3: a person who gives another check leaves the program with
// nothing (exit 1, no note kept); saying no reaches it (exit 1).
func TestConnectKeepsNothingWithoutTheCheck(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	h := startHome(t, t.TempDir())
	prog := t.TempDir()
	c := startConnect(t, h.URL, prog)
	asked := page(t, h, c.Link)
	decide(t, h, asked.ID, "allow")
	wrong := "000000"
	if asked.Check == wrong {
		wrong = "000001"
	}
	fmt.Fprintf(c.stdin, "%s\n%s\n%s\n", wrong, wrong, wrong)
	if code, _ := c.wait(t); code != exitFailed {
		t.Fatalf("three wrong checks: exit %d; stderr:\n%s", code, c.stderr)
	}
	for _, f := range []string{"session.note", "grant.json"} {
		if _, err := os.Stat(filepath.Join(prog, f)); err == nil {
			t.Fatalf("%s kept without the check", f)
		}
	}

	c = startConnect(t, h.URL, t.TempDir())
	asked = page(t, h, c.Link)
	if v := decide(t, h, asked.ID, "deny"); v.State != "denied" {
		t.Fatalf("after deny: %+v", v)
	}
	if code, _ := c.wait(t); code != exitFailed || !strings.Contains(c.stderr.String(), "said no") {
		t.Fatalf("denied: exit %d; stderr:\n%s", code, c.stderr)
	}
}

// connect's usage and reachability errors have their exit codes.
func TestConnectExitCodes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	if _, code := nodeCLI(t, "", "connect"); code != exitUsage {
		t.Fatalf("no HOME: exit %d", code)
	}
	withKey := t.TempDir()
	if _, c := nodeCLI(t, "", "init", "--dir", withKey); c != 0 {
		t.Fatal("init")
	}
	if _, code := nodeCLI(t, "", "connect", "http://localhost:1", "--dir", withKey, "--no-open"); code != exitUsage {
		t.Fatalf("a directory with the account key: exit %d", code)
	}
	if _, code := nodeCLI(t, "", "connect", "http://127.0.0.1:1", "--dir", t.TempDir(), "--no-open", "--timeout", "3s"); code != exitUnreachable {
		t.Fatalf("no relay: exit %d", code)
	}
	if out, code := nodeCLI(t, "", "connect", "--help"); code != 0 || !strings.Contains(out, "usage: minca connect HOME") {
		t.Fatalf("--help: %d %s", code, out)
	}
	if out, code := nodeCLI(t, "", "home", "--help"); code != 0 || !strings.Contains(out, "usage: minca home") {
		t.Fatalf("--help: %d %s", code, out)
	}
	if _, code := nodeCLI(t, "", "home", "--listen", "0.0.0.0:0", "--dir", t.TempDir()); code != exitUsage {
		t.Fatalf("a home on a public address: exit %d", code)
	}
	// A program's directory (a note, no account key) is not made an
	// account's.
	prog := t.TempDir()
	key, err := node.SessionKey(prog)
	if err != nil {
		t.Fatal(err)
	}
	acc, _ := identity.GenerateKey()
	n, _ := identity.IssueNote(acc, identity.NoteOptions{Aud: key.DID(), Cmd: identity.CmdRecord})
	if err := node.KeepGrant(prog, n, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, code := nodeCLI(t, "", "home", "--listen", "127.0.0.1:0", "--dir", prog); code != exitUsage {
		t.Fatalf("a home on a program's directory: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(prog, node.AccountKeyName)); err == nil {
		t.Fatal("an account key was made in a program's directory")
	}
}
