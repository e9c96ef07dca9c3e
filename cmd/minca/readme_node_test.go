package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The README's node walkthrough, run word for word by bash with this build
// as `minca` on PATH and MINCA_DIR a fresh directory.
func TestReadmeNodeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed")
	}
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "With the node running")
	if !ok {
		t.Fatal("the README has no node walkthrough")
	}
	_, rest, _ = strings.Cut(rest, "```sh\n")
	script, _, ok := strings.Cut(rest, "```")
	if !ok || !strings.Contains(script, "minca put") {
		t.Fatal("the README's node walkthrough is not a sh block")
	}
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(readmeEnv(t), "MINCA_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's examples failed: %v\n%s", err, out)
	}
	if strings.Count(string(out), `"cursor"`) != 3 {
		t.Fatalf("minca watch printed:\n%s", out)
	}
	// The private space's lines, in a node directory of their own.
	_, rest, ok = strings.Cut(rest, "A **private space**")
	if !ok {
		t.Fatal("the README has no private space walkthrough")
	}
	_, rest, _ = strings.Cut(rest, "```sh\n")
	script, _, ok = strings.Cut(rest, "```")
	if !ok || !strings.Contains(script, "space create Diary --private") {
		t.Fatal("the README's private space walkthrough is not a sh block")
	}
	cmd = exec.Command("bash", "-c", "set -euo pipefail\n"+script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(readmeEnv(t), "MINCA_DIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's private space examples failed: %v\n%s", err, out)
	}
}
