package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/pebble/pebbletest"
	"github.com/minca-go/minca/backends/sqlite/sqlitetest"
	"github.com/minca-go/minca/engine/enginetest"
)

// The minca command on a damaged Pebble or SQLite store: every verb that
// reads says what is damaged on one line and exits 1, store check as a
// problem line; never a stack trace.
func TestDamagedStoresOnTheCommandLine(t *testing.T) {
	t.Parallel()
	for _, d := range pebbletest.Damages() {
		t.Run("pebble/"+d.Name, func(t *testing.T) {
			st := pebbletest.NewDamaged(t)
			file := d.Damage(t, st)
			damageReported(t, "pebble:"+st.Dir, st.Dir, file)
		})
	}
	for _, d := range sqlitetest.Damages() {
		t.Run("sqlite/"+d.Name, func(t *testing.T) {
			st := sqlitetest.NewDamaged(t)
			d.Damage(t, st)
			damageReported(t, "sqlite:"+st.Path, st.Path)
		})
	}
}

// damageReported runs the store verbs that read (check, get, stats,
// export) on the damaged store at url, each as a process as a user runs
// it, and requires each to report the damage: exit 1, one line on stderr
// and no Go stack trace or panic, what is damaged (names) in that line —
// or, for check, in a {"problem"} line on stdout.
func damageReported(t *testing.T, url string, names ...string) {
	t.Helper()
	space := enginetest.SpaceID("localtest")
	for _, args := range [][]string{
		{"store", "check", "--store", url},
		{"store", "get", "--store", url, space, "somekey"},
		{"store", "stats", "--store", url},
		{"store", "export", "--store", url},
	} {
		path, env := mincaCommand(t)
		cmd := exec.Command(path, args...)
		var stdout, stderr bytes.Buffer
		cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
		code := 0
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		out, errOut := stdout.String(), stderr.String()
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
