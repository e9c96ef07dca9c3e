package engine_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Nothing under engine/ (tests aside) knows about the node: the engine
// applies a judge's verdicts, it does not pick one (DESIGN, Layout).
func TestEngineImportsNoNode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 5 {
		t.Fatalf("go list -deps printed %d packages: %q", len(deps), out)
	}
	for _, p := range deps {
		if p == "github.com/minca-go/minca/node" || strings.HasPrefix(p, "github.com/minca-go/minca/node/") {
			t.Errorf("a package under engine/ links %s", p)
		}
	}
}
