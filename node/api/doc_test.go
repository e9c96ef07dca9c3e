package api_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The shell examples of docs/api.md, run word for word against a node.
func TestAPIDocExamples(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed")
	}
	b, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	blocks := 0
	for _, part := range strings.Split(string(b), "```sh\n")[1:] {
		code, _, ok := strings.Cut(part, "```")
		if !ok {
			t.Fatal("an unclosed sh block in docs/api.md")
		}
		script.WriteString(code)
		blocks++
	}
	if blocks < 6 {
		t.Fatalf("docs/api.md has %d sh blocks", blocks)
	}
	f := newFixture(t)
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Env = append(os.Environ(), "MINCA="+f.srv.URL, "TOKEN="+f.token)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the examples failed: %v\n%s", err, out)
	}
}
