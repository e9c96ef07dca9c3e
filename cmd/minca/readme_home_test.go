package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// person stands in for the person at the browser: `minca connect` opens
// the link with xdg-open, and this one does what the page does (hands the
// home the code from the fragment, waits for the program to ask, presses
// Allow) and then types the check the page shows into the terminal, the
// FIFO $PERSON that is the walkthrough's stdin.
const person = `#!/bin/sh
set -eu
link="$1"
origin="${link%%/connect*}"
code="${link#*#}"
id=$(curl -sf -X POST -H "Origin: $origin" --data-urlencode "code=$code" "$origin/connect/code" | jq -r .id)
while :; do
  v=$(curl -sf "$origin/connect/code/$id")
  [ "$(printf '%s' "$v" | jq -r .state)" = asked ] && break
  sleep 0.1
done
curl -sf -X POST -H "Origin: $origin" -d decision=allow "$origin/connect/code/$id" >/dev/null
printf '%s\n' "$(printf '%s' "$v" | jq -r .check)" > "$PERSON"
`

// The README's home and connect walkthrough, run word for word by bash
// with this build as `minca` on PATH.
func TestReadmeHomeWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, tool := range []string{"jq", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "A whole connection, as a test runs it")
	if !ok {
		t.Fatal("the README has no home walkthrough")
	}
	_, rest, _ = strings.Cut(rest, "```sh\n")
	script, _, ok := strings.Cut(rest, "```")
	if !ok || !strings.Contains(script, "minca connect") || !strings.Contains(script, "minca home") {
		t.Fatal("the README's home walkthrough is not a sh block")
	}
	bin := mincaOnPath(t)
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(person), 0o755); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	fifo := filepath.Join(work, "terminal")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Read and write: opening does not wait for a writer, and the
	// terminal never ends while the walkthrough runs.
	terminal, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer terminal.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+script)
	cmd.Dir = work
	cmd.Stdin = terminal
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "MINCA_") && !strings.HasPrefix(e, "PATH=") {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "MINCA_DIR="+t.TempDir(), "PERSON="+fifo)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("the README's walkthrough failed: %v\n%s\n%s", err, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 || lines[len(lines)-2] != "/record" || lines[len(lines)-1] != "code" {
		t.Fatalf("the walkthrough printed:\n%s", out)
	}
}
