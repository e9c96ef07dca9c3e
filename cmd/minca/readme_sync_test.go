//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's two-node example, run word for word by bash with this build
// as `minca` on PATH: two `minca serve` processes sync a space.
func TestReadmeTwoNodesSync(t *testing.T) {
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
	_, rest, ok := strings.Cut(string(b), "## Two nodes sync")
	if !ok {
		t.Fatal("the README has no two-node example")
	}
	_, rest, _ = strings.Cut(rest, "```sh\n")
	script, _, ok := strings.Cut(rest, "```")
	if !ok || !strings.Contains(script, "--peer ") {
		t.Fatal("the README's two-node example is not a sh block")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+script)
	cmd.Dir = t.TempDir()
	cmd.WaitDelay = 5 * time.Second // the nodes it started hold the output open
	// On a timeout, the nodes it started go with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = readmeEnv(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's two-node example failed: %v\n%s", err, out)
	}
	for _, want := range []string{`"hello from alice"`, `"hello from bob"`, "true"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("the example printed no %s:\n%s", want, out)
		}
	}
}
