package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The README's carrier example, run word for word by bash with this build
// as `minca` on PATH and MINCA_DIR a fresh directory.
func TestReadmeCarryExample(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, tool := range []string{"jq", "timeout"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "A carrier keeps an account's spaces")
	if !ok {
		t.Fatal("the README has no carrier example")
	}
	_, rest, _ = strings.Cut(rest, "```sh\n")
	script, _, ok := strings.Cut(rest, "```")
	if !ok || !strings.Contains(script, "minca carry ") {
		t.Fatal("the README's carrier example is not a sh block running minca carry")
	}
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(readmeEnv(t), "MINCA_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's carrier example failed: %v\n%s", err, out)
	}
}
