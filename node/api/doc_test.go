package api_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The shell examples of docs/api.md, run word for word against a node.
//
// What each example prints is checked: every curl that prints an answer
// pipes it into `jq -e` with what the answer must be (its members, its
// values), or keeps it for a later line; none prints unchecked.
func TestAPIDocExamples(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			// CI installs them: a skip there would make CI thinner unseen.
			if os.Getenv("MINCA_REQUIRE_DOC_TOOLS") == "1" {
				t.Fatalf("%s is not installed, and MINCA_REQUIRE_DOC_TOOLS=1 (CI) says the documentation tests run", tool)
			}
			t.Skip(tool + " is not installed")
		}
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
		for _, l := range strings.Split(code, "\n") {
			if strings.Contains(l, "curl ") && !strings.Contains(l, "| jq -e ") && !strings.Contains(l, "-o /dev/null") &&
				!strings.Contains(l, "=$(curl") && !strings.Contains(l, "> ") {
				t.Errorf("docs/api.md prints an answer no one checks: %s", l)
			}
		}
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
