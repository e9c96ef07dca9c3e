package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// carryLine is minca carry's first line.
type carryLine struct {
	Type     string   `json:"type"`
	DID      string   `json:"did"`
	Accounts []string `json:"accounts"`
	Spaces   []string `json:"spaces"`
	Relays   []string `json:"relays"`
}

// startCarry runs minca carry as a process and returns it with its first
// line, and the rest of its stdout as lines arrive.
func startCarry(t *testing.T, args ...string) (*exec.Cmd, carryLine, <-chan string) {
	t.Helper()
	path, env := mincaCommand(t)
	cmd := exec.Command(path, append([]string{"carry"}, args...)...)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	select {
	case l, ok := <-lines:
		var cl carryLine
		if !ok || json.Unmarshal([]byte(l), &cl) != nil || cl.Type != "carrier" {
			t.Fatalf("minca carry's first line: %q (stderr %s)", l, stderr.String())
		}
		return cmd, cl, lines
	case <-time.After(30 * time.Second):
		t.Fatalf("minca carry printed nothing: %s", stderr.String())
	}
	return nil, carryLine{}, nil
}

// stopWith signals a process and returns its exit code.
func stopWith(t *testing.T, cmd *exec.Cmd, sig os.Signal) int {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("minca carry did not stop")
	}
	return cmd.ProcessState.ExitCode()
}

// minca carry and minca carrier, as real processes: the account adds a
// carrier through its node and prints the grant; the carrier takes it,
// keeps it across runs, and exits as the CLI conventions say.
func TestCarryCommand(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	home, cdir, backup := t.TempDir(), filepath.Join(t.TempDir(), "carrier"), t.TempDir()
	if _, errOut, code := minca(t, "", "init", "--dir", home); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	if err := os.MkdirAll(cdir, 0o700); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := minca(t, "", "keygen", "--out", filepath.Join(cdir, "carrier.key"))
	if code != 0 {
		t.Fatalf("keygen: %s", errOut)
	}
	did := strings.TrimSpace(out)
	grant, errOut, code := minca(t, "", "carrier", "add", did, "--name", "home server", "--relay", "ws://127.0.0.1:9", "--dir", home)
	if code != 0 {
		t.Fatalf("carrier add: %d %s", code, errOut)
	}
	var g struct {
		Kind  string `json:"kind"`
		DID   string `json:"did"`
		Carry struct {
			Space string `json:"space"`
		} `json:"carry"`
	}
	if err := json.Unmarshal([]byte(grant), &g); err != nil || g.Kind != "carry" || g.Carry.Space == "" {
		t.Fatalf("the grant: %s %v", grant, err)
	}
	gf := filepath.Join(t.TempDir(), "grant.json")
	if err := os.WriteFile(gf, []byte(grant), 0o600); err != nil {
		t.Fatal(err)
	}
	if list, _, code := minca(t, "", "carrier", "list", "--dir", home); code != 0 || !strings.Contains(list, did) || strings.Count(list, "\n") != 1 {
		t.Fatalf("carrier list: %d %s", code, list)
	}

	cmd, first, lines := startCarry(t, "--dir", cdir, "--grant", gf, "--store", "folder:"+backup)
	if first.DID != did || len(first.Accounts) != 1 || first.Accounts[0] != g.DID || len(first.Spaces) != 1 || first.Spaces[0] != g.Carry.Space ||
		len(first.Relays) != 1 {
		t.Fatalf("first line: %+v", first)
	}
	for _, want := range []string{`{"relays":["ws://127.0.0.1:9"],"state":"running","type":"sync"}`, `"type":"carrying"`} {
		select {
		case l := <-lines:
			if !strings.Contains(l, want) || want[0] != '{' && !strings.Contains(l, g.Carry.Space) {
				t.Fatalf("a line: %s; want %s", l, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("no line %s", want)
		}
	}
	if code := stopWith(t, cmd, syscall.SIGTERM); code != 143 {
		t.Fatalf("SIGTERM: exit %d", code)
	}
	// Its grant stays in its directory; the folder holds its store.
	cmd, first, _ = startCarry(t, "--dir", cdir, "--store", "folder:"+backup)
	if len(first.Accounts) != 1 || first.Spaces[0] != g.Carry.Space {
		t.Fatalf("run again: %+v", first)
	}
	if code := stopWith(t, cmd, syscall.SIGINT); code != 130 {
		t.Fatalf("SIGINT: exit %d", code)
	}
	if ents, err := os.ReadDir(backup); err != nil || len(ents) == 0 {
		t.Fatalf("the folder store holds nothing: %v", err)
	}

	// Bad usage and bad input: exit 2.
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"v":1,"kind":"app"}`), 0o600)
	for _, args := range [][]string{{"carry"}, {"carry", "--dir", cdir, "--grant", bad}, {"carry", "--dir", cdir, "extra"}} {
		if _, _, code := minca(t, "", args...); code != 2 {
			t.Fatalf("%v: exit %d, want 2", args, code)
		}
	}
	if out, _, code := minca(t, "", "carry", "--help"); code != 0 || !strings.HasPrefix(out, "usage: minca carry") {
		t.Fatalf("--help: %d %s", code, out)
	}
	// Removing it; removing it again is not found.
	if _, errOut, code := minca(t, "", "carrier", "remove", did, "--dir", home); code != 0 {
		t.Fatalf("carrier remove: %d %s", code, errOut)
	}
	if _, _, code := minca(t, "", "carrier", "remove", did, "--dir", home); code != 3 {
		t.Fatalf("removing it again: exit %d, want 3", code)
	}
}
