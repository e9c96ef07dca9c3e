package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/engine"
)

// A real minca process, sent SIGINT or SIGTERM in the middle of importing
// a large file, prints the line of every version it committed and of no
// other, says how far it got, and exits 130 or 143; the store holds
// exactly what it printed, and running the import again completes it.
func TestImportInterrupted(t *testing.T) {
	n := 20_000
	if testing.Short() {
		n = 12_000
	}
	dir := t.TempDir()
	file := versionsFile(t, dir, "big.jsonl", n, 9)
	total := countLines(t, file)
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "db")
			path, env := mincaCommand(t)
			// Flags after the file, as a user may type them.
			cmd := exec.Command(path, "store", "import", file, "--store", store)
			cmd.Env = env
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stdout)
			var ids []string
			printed := 0
			for sc.Scan() {
				printed++
				if printed == 1 { // the first batch is committed: interrupt
					if err := cmd.Process.Signal(c.sig); err != nil {
						t.Fatal(err)
					}
				}
				var o struct{ ID, Outcome string }
				if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
					t.Fatalf("line %d: %q", printed, sc.Text())
				}
				if o.Outcome == "refused" {
					t.Fatalf("refused: %s", sc.Text())
				}
				ids = append(ids, o.ID)
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != c.code {
				t.Fatalf("exit %v, want %d; stderr:\n%s", err, c.code, stderr.String())
			}
			if printed == total {
				t.Fatalf("all %d lines were imported before the signal took effect: the file is too small to test this", total)
			}
			m := regexp.MustCompile(`interrupted after (\d+) of (\d+) lines; run again to continue`).FindStringSubmatch(stderr.String())
			if m == nil {
				t.Fatalf("no summary on stderr:\n%s", stderr.String())
			}
			if got, _ := strconv.Atoi(m[1]); got != printed {
				t.Errorf("summary says %s lines, %d were printed", m[1], printed)
			}
			if got, _ := strconv.Atoi(m[2]); got != total {
				t.Errorf("summary says %s lines in all, the file has %d", m[2], total)
			}
			if strings.Contains(stderr.String(), "goroutine ") {
				t.Errorf("a stack trace on stderr:\n%s", stderr.String())
			}
			// Every id printed is held, and nothing else is.
			kv, err := pebble.Open(store, nil)
			if err != nil {
				t.Fatal(err)
			}
			st, err := engine.Open(kv, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for _, id := range ids {
				if _, err := st.Version(ctx, id); err != nil {
					t.Fatalf("printed %s, but the store: %v", id, err)
				}
			}
			stats, err := st.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if stats.Versions != int64(len(ids)) {
				t.Fatalf("the store holds %d versions, %d lines were printed", stats.Versions, len(ids))
			}
			st.Close()
			// Run again: it goes on to the end.
			out, errs, code := minca(t, "", "store", "import", "--store", store, file)
			if code != 0 || strings.Count(out, "\n") != total {
				t.Fatalf("the second run: exit %d, %d lines\n%s", code, strings.Count(out, "\n"), errs)
			}
		})
	}
}

// The exit code of a run cut short by a signal is the signal's, whatever
// the verb returned; without a signal, a cancelled run is a failure.
func TestInterruptedExitCodes(t *testing.T) {
	for _, c := range []struct {
		cause error
		err   error
		want  int
	}{
		{&interrupted{sig: syscall.SIGINT}, context.Canceled, exitSIGINT},
		{&interrupted{sig: syscall.SIGTERM}, context.Canceled, exitSIGTERM},
		{&interrupted{sig: syscall.SIGTERM}, nil, exitSIGTERM},
		{&interrupted{sig: os.Interrupt}, quiet(exitFailed), exitSIGINT},
		{&interrupted{sig: syscall.SIGINT}, fmt.Errorf("store x: %w", engine.ErrUnreachable), exitSIGINT},
		{errors.New("not a signal"), context.Canceled, exitFailed},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(c.cause)
		var errb strings.Builder
		got := exitCode(ctx, &stdio{err: &errb}, "store import", c.err)
		if got != c.want {
			t.Errorf("cause %v, error %v: exit %d, want %d", c.cause, c.err, got, c.want)
		}
	}
}

// interruptible turns the first signal into the context's cause.
func TestInterruptibleContext(t *testing.T) {
	ctx, stop := interruptible(context.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not cancel the context")
	}
	var in *interrupted
	if !errors.As(context.Cause(ctx), &in) || in.code() != exitSIGTERM {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
}

// countLines counts a file's non-blank lines.
func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}
