package localtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Minca builds the minca command into a temporary directory and returns
// its path.
func Minca(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "minca")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/minca-go/minca/cmd/minca").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// Run runs bin with args and returns its stdout, stderr and exit code.
func Run(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errb.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

// DamageReported runs the store verbs that read (check, get, stats,
// export) on the damaged store at url, and requires each to report the
// damage as a user reads it: exit 1, one line on stderr and no Go stack
// trace or panic, the store's path and what is damaged (names) in that
// line — or, for check, in a {"problem"} line on stdout.
func DamageReported(t *testing.T, bin, url, space, key string, names ...string) {
	t.Helper()
	for _, args := range [][]string{
		{"store", "check", "--store", url},
		{"store", "get", "--store", url, space, key},
		{"store", "stats", "--store", url},
		{"store", "export", "--store", url},
	} {
		out, errOut, code := Run(t, bin, args...)
		verb := strings.Join(args[:2], " ")
		if code != 1 {
			t.Errorf("%s: exit %d, want 1\nstdout %s\nstderr %s", verb, code, out, errOut)
		}
		line := strings.TrimSuffix(errOut, "\n")
		if line == "" || strings.Contains(line, "\n") {
			t.Errorf("%s: stderr is not one line:\n%s", verb, errOut)
		}
		for _, bad := range []string{"goroutine ", "panic", "runtime."} {
			if strings.Contains(errOut, bad) {
				t.Errorf("%s: stderr shows %q:\n%s", verb, bad, errOut)
			}
		}
		report := line
		if args[1] == "check" {
			report = ""
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var p struct{ Problem string }
				if json.Unmarshal([]byte(l), &p) == nil && p.Problem != "" {
					report = p.Problem
					break
				}
			}
			if report == "" {
				t.Errorf("%s: no {\"problem\"} line on stdout:\n%s", verb, out)
				continue
			}
		}
		for _, n := range names {
			if !strings.Contains(report, n) {
				t.Errorf("%s: the report does not name %q: %s", verb, n, report)
			}
		}
	}
}
