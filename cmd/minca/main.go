// Command minca is the Minca for Go node and its tools.
//
// Usage: minca VERB [flags]. Output meant for programs is JSON lines on
// stdout; progress and logs go to stderr. Exit codes: 0 ok, 1 a check
// failed, 2 bad usage or input, 3 not found.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	os.Exit(code)
}

// stdio is what a verb reads and writes; tests pass buffers.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

func (s *stdio) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(s.err, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// A verb is one `minca VERB`. Each lives in its own file.
type verb struct {
	name    string
	summary string
	run     func(ctx context.Context, s *stdio, args []string) error
}

// verbs lists every verb; the one place a new verb is added.
func verbs() []verb {
	v := []verb{
		{"canon", "print the canonical JSON form of a value (02 §1)", runCanon},
		{"cid", "print the content id of a JSON value or of raw bytes (02 §2)", runCID},
		{"keygen", "write a new P-256 private key file and print its did:key", runKeygen},
		{"sign", "sign an unsigned version with a key file (02 §3.3)", runSign},
		{"verify", "check versions: shape, signature, capability gate (02 §3.3, §4.6, §9.3)", runVerify},
		{"key", "record keys: owner part, fresh keys (02 §4.1)", runKey},
		{"note", "notes: issue one from an account key, check them (06 §1.2, §2.5)", runNote},
		{"collection", "collection definitions: check one, validate bodies against its schema (02 §6)", runCollection},
		{"tags", "print the topic tags versions must carry under a definition (02 §8)", runTags},
		{"bench", "run a benchmark suite and print its results (ratios against a bound, medians)", runBench},
		{"negentropy-harness", "speak the reference negentropy test harness protocol on stdin/stdout", runNegentropyHarness},
		{"mirror", "couple a store to a folder or S3 both ways: export, import, compact", runMirror},
		{"backup", "write a store's new versions to a folder or S3 as segments (resumable)", runBackup},
		{"restore", "admit every version in a folder's or bucket's segments into a store (resumable)", runRestore},
		{"compact", "rewrite this store's segments in a folder or S3 into fewer, stubs for superseded bodies", runCompact},
		{"space", "spaces: make a genesis, keep one with a store, show a space's state (docs/spaces.md)", runSpace},
		{"store", "version stores: import, get, history, export, stats, check (pebble:, sqlite:, memory:, folder:, s3://)", runStore},
	}
	sort.Slice(v, func(i, j int) bool { return v[i].name < v[j].name })
	return v
}

// Exit codes of the command line contract.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitNotFound = 3
)

// exitError carries an exit code out of a verb. A nil error means exit 0.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// usageError reports bad flags, arguments or input: exit 2.
func usageError(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// failed reports that a check failed: exit 1. Its message, if any, is printed.
func failed(err error) error { return &exitError{code: exitFailed, err: err} }

// notFound reports that what was asked for is not held: exit 3.
func notFound(format string, a ...any) error {
	return &exitError{code: exitNotFound, err: fmt.Errorf(format, a...)}
}

func run(ctx context.Context, args []string, s *stdio) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(s.err)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, v := range verbs() {
		if v.name != args[0] {
			continue
		}
		err := v.run(ctx, s, args[1:])
		return exitCode(s, v.name, err)
	}
	fmt.Fprintf(s.err, "minca: unknown verb %q\n\n", args[0])
	printUsage(s.err)
	return exitUsage
}

func exitCode(s *stdio, name string, err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && !errors.Is(ee.err, errQuiet) {
			fmt.Fprintf(s.err, "minca %s: %v\n", name, ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(s.err, "minca %s: %v\n", name, err)
	return exitUsage
}

// errQuiet marks an exit whose reason the verb already printed.
var errQuiet = errors.New("quiet")

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: minca VERB [flags]   (minca VERB --help for each verb)")
	fmt.Fprintln(w)
	for _, v := range verbs() {
		fmt.Fprintf(w, "  %-20s %s\n", v.name, v.summary)
	}
}
