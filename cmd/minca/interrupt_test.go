package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/internal/longtest"
)

// A real minca process, sent SIGINT or SIGTERM in the middle of importing,
// prints the line of every version it committed and of no other, says how
// far it got, and exits 130 or 143; the store holds exactly what it
// printed, and running the import again completes it. The input is a pipe
// the test writes two and a half batches into and leaves open, so the
// import is always in the middle when the signal comes: it says how many
// lines it read at least. With -long, the input is also a large regular file,
// whose lines it counts: interrupted after N of M.
func TestImportInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Two batches and half a third: the half can never be committed, as
	// the pipe never ends.
	// The store is Pebble's, which takes the default batch.
	file := versionsFile(t, dir, "batches.jsonl", 2*engine.DefaultImportBatch+engine.DefaultImportBatch/2, 9)
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			t.Parallel()
			interruptImport(t, file, c.sig, c.code, false)
		})
	}
	if longtest.Enabled() {
		big := versionsFile(t, dir, "big.jsonl", 20_000, 9)
		t.Run("regular file", func(t *testing.T) {
			interruptImport(t, big, syscall.SIGINT, 130, true)
		})
	}
}

// interruptImport runs `minca store import` of file, as a named regular
// file or through a pipe left open, sends sig once the first batch is
// committed, and checks what it printed, said and left.
func interruptImport(t *testing.T, file string, sig syscall.Signal, exit int, regular bool) {
	total := countLines(t, file)
	store := filepath.Join(t.TempDir(), "db")
	path, env := mincaCommand(t)
	args := []string{"store", "import", "--judge", "roots", "-", "--store", store}
	if regular {
		// Flags after the file, as a user may type them.
		args = []string{"store", "import", "--judge", "roots", file, "--store", store}
	}
	cmd := exec.Command(path, args...)
	cmd.Env = env
	var stdin io.WriteCloser
	if !regular {
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !regular {
		go func() {
			// Every line, and then nothing: the pipe stays open until the
			// process has ended.
			b, _ := os.ReadFile(file)
			stdin.Write(b)
		}()
	}
	sc := bufio.NewScanner(stdout)
	var ids []string
	printed := 0
	for sc.Scan() {
		printed++
		if printed == 1 { // the first batch is committed: interrupt
			if err := cmd.Process.Signal(sig); err != nil {
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
	if !errors.As(err, &ee) || ee.ExitCode() != exit {
		t.Fatalf("exit %v, want %d; stderr:\n%s", err, exit, stderr.String())
	}
	if printed == total {
		t.Fatalf("all %d lines were imported before the signal took effect: the file is too small to test this", total)
	}
	if regular {
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
	} else {
		m := regexp.MustCompile(`interrupted after (\d+) of at least (\d+) lines; run again to continue`).FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("no summary on stderr:\n%s", stderr.String())
		}
		if got, _ := strconv.Atoi(m[1]); got != printed {
			t.Errorf("summary says %s lines, %d were printed", m[1], printed)
		}
		if got, _ := strconv.Atoi(m[2]); got < printed || got > total {
			t.Errorf("summary says it read at least %s lines: %d were printed, %d written", m[2], printed, total)
		}
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
		d, err := canonical.ParseID(id)
		if err == nil {
			_, err = st.Version(ctx, d)
		}
		if err != nil {
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
	out, errs, code := minca(t, "", "store", "import", "--judge", "roots", "--store", store, file)
	if code != 0 || strings.Count(out, "\n") != total {
		t.Fatalf("the second run: exit %d, %d lines\n%s", code, strings.Count(out, "\n"), errs)
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
	case <-time.After(time.Minute):
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

// Case 9 (issue 12): a running mirror whose folder is renamed away for a
// few seconds waits for it, saying so on stderr, goes on when it is back,
// and stops when asked (SIGINT: exit 130); with the folder gone for longer
// than --gone-grace it stops by itself, exit 3, naming the blob store.
func TestMirrorWaitsForFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := "pebble:" + filepath.Join(dir, "a")
	synced := filepath.Join(dir, "synced")
	mustRun(t, "store", "import", "--judge", "roots", "--store", a, versionsFile(t, dir, "v.jsonl", 20, 14))
	mustRun(t, "backup", "--store", a, "--to", "folder:"+synced)
	start := func(grace string) (*exec.Cmd, <-chan string) {
		path, env := mincaCommand(t)
		cmd := exec.Command(path, "mirror", "--store", a, "--to", "folder:"+synced, "--every", "1s", "--gone-grace", grace)
		cmd.Env = append(env, "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		t.Cleanup(func() { cmd.Process.Kill() })
		return cmd, lines
	}
	await := func(lines <-chan string, what string) string {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stderr ended before %q", what)
				}
				if strings.Contains(l, what) {
					return l
				}
			case <-deadline:
				t.Fatalf("no %q on stderr", what)
			}
		}
	}
	exitOf := func(cmd *exec.Cmd) int {
		var ee *exec.ExitError
		if err := cmd.Wait(); errors.As(err, &ee) {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	}

	cmd, lines := start("1m")
	await(lines, `msg=mirror `)
	if err := os.Rename(synced, synced+".away"); err != nil {
		t.Fatal(err)
	}
	await(lines, "waiting for it")
	time.Sleep(2 * time.Second)
	if err := os.Rename(synced+".away", synced); err != nil {
		t.Fatal(err)
	}
	await(lines, "the blob store is back")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(cmd); code != exitSIGINT {
		t.Fatalf("mirror after SIGINT: exit %d", code)
	}

	cmd, lines = start("2s")
	await(lines, `msg=mirror `)
	if err := os.Rename(synced, synced+".away"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	last := await(lines, "minca mirror: ")
	if code := exitOf(cmd); code != exitNotFound || time.Since(began) > 15*time.Second || !strings.Contains(last, "blob store folder:"+synced+": gave up after waiting") {
		t.Fatalf("mirror with its folder gone past --gone-grace: exit %d after %v: %s", code, time.Since(began), last)
	}
}
