package node_test

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/minca-go/minca"

// above are the packages that stand on the node (DESIGN, Layout): the
// node itself and its subpackages, the carrier and the account home that
// run one, the command line and the benchmarks.
var above = []string{"node", "carrier", "accounthome", "cmd", "bench"}

// layers lists every package of the module, its tests' variants folded
// into it, with the module's packages each links.
func layers(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-test", "-f", "{{.ImportPath}}|{{join .Deps \",\"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string]map[string]bool{}
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		path, list, _ := strings.Cut(strings.TrimSpace(line), "|")
		path, _, _ = strings.Cut(path, " [")
		path = strings.TrimSuffix(strings.TrimSuffix(path, ".test"), "_test")
		rel, ok := strings.CutPrefix(path, module+"/")
		if !ok {
			continue
		}
		if deps[rel] == nil {
			deps[rel] = map[string]bool{}
		}
		for _, d := range strings.Split(list, ",") {
			d, _, _ = strings.Cut(d, " [") // a package as built for a test
			if d, ok := strings.CutPrefix(d, module+"/"); ok {
				deps[rel][d] = true
			}
		}
	}
	if len(deps) < 20 {
		t.Fatalf("go list printed %d packages: %q", len(deps), out)
	}
	return deps
}

// under reports whether pkg is dir or below it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// Nothing below the node imports it, tests included: the judge, the carry
// profile, the engine and its backends, the stores, sync's parts all stand
// without it (DESIGN, Layout: "nothing below node/ imports it").
func TestNothingBelowTheNodeImportsIt(t *testing.T) {
	l := layers(t)
	for _, pkg := range slices.Sorted(maps.Keys(l)) {
		if slices.ContainsFunc(above, func(a string) bool { return under(pkg, a) }) {
			continue
		}
		for _, d := range slices.Sorted(maps.Keys(l[pkg])) {
			if under(d, "node") {
				t.Errorf("%s, below the node, links %s", pkg, d)
			}
		}
	}
}

// The backends hold bytes for the engine and decide nothing: none links a
// judge or the node, tests included (their shared suites judge with
// enginetest's).
func TestBackendsLinkNoJudge(t *testing.T) {
	n := 0
	l := layers(t)
	for _, pkg := range slices.Sorted(maps.Keys(l)) {
		if !under(pkg, "backends") {
			continue
		}
		n++
		for _, d := range slices.Sorted(maps.Keys(l[pkg])) {
			if under(d, "judge") || under(d, "node") {
				t.Errorf("%s links %s", pkg, d)
			}
		}
	}
	if n < 5 {
		t.Fatalf("only %d packages under backends/", n)
	}
}

// The carrier judges with package judge and reads what an account hands it
// with package carry, and the carry profile stands on neither the node nor
// a judge: the carrier's own code links no node (its tests run one as the
// account's), and carry decides nothing.
func TestCarrierAndCarryStandWithoutTheNode(t *testing.T) {
	for pkg, not := range map[string][]string{"carrier": {"node"}, "carry": {"node", "judge"}} {
		out, err := exec.Command("go", "list", "-deps", module+"/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, module+"/record") {
			t.Fatalf("go list -deps %s printed %q", pkg, out)
		}
		for _, d := range deps {
			rel, ok := strings.CutPrefix(d, module+"/")
			if ok && slices.ContainsFunc(not, func(n string) bool { return under(rel, n) }) {
				t.Errorf("%s links %s", pkg, rel)
			}
		}
	}
}
