package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The minca binary links no test-only code: no fake S3 server, no
// conformance suite, no fake blob stores (STYLE, test-only code), and not
// package testing (the benchmarks measure with their own loop).
func TestBinaryLinksNoTestCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed %d packages: %q", len(deps), out)
	}
	for _, p := range deps {
		if p == "testing" {
			t.Error("the minca binary links package testing")
		}
		for _, bad := range []string{"gofakes3", "enginetest", "blobstest", "connecttest", "transporttest"} {
			if strings.Contains(p, bad) {
				t.Errorf("the minca binary links %s", p)
			}
		}
	}
}
