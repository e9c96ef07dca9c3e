package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// runAsMinca makes the test binary run main() instead of the tests: the
// tests that need a real process (signals, the README's shell walkthrough)
// run this very binary as `minca`, so they test main as built, without a
// separate go build.
const runAsMinca = "MINCA_TEST_RUN_AS_MINCA"

// recordCalls, set to a directory for a process run as minca, makes it
// record its arguments, what it printed on stdout and stderr and its exit
// code there (call-*.args, .out, .err, .code), for a test to check each
// JSON line a documentation script printed against the shape documented
// for its verb, and to see a `minca serve` that stopped on its own.
const recordCalls = "MINCA_TEST_RECORD_CALLS"

func TestMain(m *testing.M) {
	if os.Getenv(runAsMinca) == "1" {
		if dir := os.Getenv(recordCalls); dir != "" {
			os.Exit(runRecorded(dir))
		}
		main()
		return
	}
	flag.Parse()
	waitingTestsAtOnce(4)
	tmp, err := os.MkdirTemp("", "minca-test-env-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testEnvironment(tmp)
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// testEnvironment sets the process environment every test here runs in,
// once, before any runs: so no test sets it, and the tests that run minca
// in process can run in parallel. It holds S3 credentials as a user would
// give them, for the fake S3 servers on loopback (and no ~/.aws files or
// instance metadata service); a cache directory under tmp, not the
// user's, for the indexes of the folder: and s3:// stores of tests that
// choose none (a device); and none of the caller's settings of minca's
// defaults (MINCA_STORE, MINCA_DIR, MINCA_LISTEN, MINCA_LOG_FORMAT). A
// test that checks one of those runs minca as a process with it set
// (withEnv, mincaProcess).
func testEnvironment(tmp string) {
	for _, k := range []string{"MINCA_STORE", "MINCA_DIR", "MINCA_LISTEN", "MINCA_LOG_FORMAT"} {
		os.Unsetenv(k)
	}
	none := filepath.Join(tmp, "none")
	for k, v := range map[string]string{
		"XDG_CACHE_HOME":              filepath.Join(tmp, "cache"),
		"AWS_ACCESS_KEY_ID":           "test",
		"AWS_SECRET_ACCESS_KEY":       "test",
		"AWS_CONFIG_FILE":             none,
		"AWS_SHARED_CREDENTIALS_FILE": none,
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		os.Setenv(k, v)
	}
}

// withEnv is this process's environment with each KEY=VALUE of set in
// place of KEY's own, and without the keys in unset: for minca run as a
// process (mincaProcess).
func withEnv(set []string, unset ...string) []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if slices.Contains(unset, k) || slices.ContainsFunc(set, func(s string) bool { return strings.HasPrefix(s, k+"=") }) {
			continue
		}
		env = append(env, e)
	}
	return append(env, set...)
}

// mincaProcess runs minca as a process in dir with the environment env
// (nil: this process's) and stdin, and returns stdout, stderr and the exit
// code: for the tests of what minca takes from its working directory and
// environment, which the tests running it in process must not change.
func mincaProcess(t *testing.T, dir string, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	path, _ := mincaCommand(t)
	if env == nil {
		env = os.Environ()
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.Env = append(env, runAsMinca+"=1")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("minca %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// waitingTestsAtOnce lets n parallel tests run at once unless -parallel
// asks otherwise: the tests here that call t.Parallel start node
// processes and spend most of their time waiting for them, so more of
// them than the default (one a CPU) at once finish sooner.
func waitingTestsAtOnce(n int) {
	asked := false
	flag.Visit(func(f *flag.Flag) { asked = asked || f.Name == "test.parallel" })
	if !asked {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// runRecorded is main, recording the call in dir (recordCalls).
func runRecorded(dir string) int {
	f, err := os.CreateTemp(dir, "call-*.out")
	if err != nil {
		fmt.Fprintln(os.Stderr, "recording the call:", err)
		return exitFailed
	}
	defer f.Close()
	base := strings.TrimSuffix(f.Name(), ".out")
	args, _ := json.Marshal(os.Args[1:])
	if err := os.WriteFile(base+".args", args, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "recording the call:", err)
		return exitFailed
	}
	ef, err := os.Create(base + ".err")
	if err != nil {
		fmt.Fprintln(os.Stderr, "recording the call:", err)
		return exitFailed
	}
	defer ef.Close()
	ctx, stop := interruptible(context.Background())
	code := run(ctx, os.Args[1:], &stdio{in: os.Stdin, out: io.MultiWriter(os.Stdout, f), err: io.MultiWriter(os.Stderr, ef)})
	stop()
	// Written whole under another name, then renamed: a watcher that globs
	// for call-*.code (watchServes) must never read the file empty, which
	// it would take for exit 0.
	if os.WriteFile(base+".code-new", []byte(strconv.Itoa(code)), 0o644) == nil {
		_ = os.Rename(base+".code-new", base+".code")
	}
	return code
}

// mincaCommand is the path and environment that run minca as a process.
func mincaCommand(t *testing.T) (path string, env []string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self, append(os.Environ(), runAsMinca+"=1")
}

// mincaOnPath writes a `minca` into a new directory, for a shell to find on
// PATH, and returns the directory.
func mincaOnPath(t *testing.T) string {
	t.Helper()
	self, _ := mincaCommand(t)
	dir := t.TempDir()
	script := "#!/bin/sh\n" + runAsMinca + "=1 exec '" + self + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "minca"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readmeEnv is the environment a README script runs in: this build's
// minca first on PATH, and none of the caller's MINCA_ settings.
func readmeEnv(t *testing.T) []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "MINCA_") && !strings.HasPrefix(e, "PATH=") {
			env = append(env, e)
		}
	}
	return append(env, "PATH="+mincaOnPath(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
}
