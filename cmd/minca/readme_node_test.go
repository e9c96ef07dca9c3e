package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const mincaHelperEnv = "MINCA_TEST_AS_MINCA"

// TestMincaHelperProcess is `minca` for the README's examples.
func TestMincaHelperProcess(t *testing.T) {
	if os.Getenv(mincaHelperEnv) == "" {
		t.Skip("run by TestReadmeNodeExamples")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(run(t.Context(), args, &stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}))
}

// The README's node walkthrough, run word for word with `minca` on PATH
// and MINCA_DIR a fresh directory.
func TestReadmeNodeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed")
	}
	b, err := os.ReadFile("../../README.md")
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
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nexec " + os.Args[0] + " -test.run=^TestMincaHelperProcess$ -test.count=1 -- \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "minca"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "MINCA_DIR="+t.TempDir(), mincaHelperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's examples failed: %v\n%s", err, out)
	}
	if strings.Count(string(out), `"cursor"`) != 3 {
		t.Fatalf("minca watch printed:\n%s", out)
	}
}
