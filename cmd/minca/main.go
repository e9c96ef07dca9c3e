// Command minca is the Minca for Go node and its tools.
//
// Usage: minca VERB [flags] [ARGS]; flags may follow arguments, and "--"
// ends them. Output meant for programs is JSON lines on stdout; progress and
// logs go to stderr. Exit codes (docs/cli.md): 0 ok, 1 a check failed, 2 bad
// usage or unreadable input, 3 not found, 4 unreachable (try again), 130
// interrupted by SIGINT, 143 by SIGTERM.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"
)

func main() {
	ctx, stop := interruptible(context.Background())
	code := run(ctx, os.Args[1:], &stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	os.Exit(code)
}

// stdio is what a verb reads and writes; tests pass buffers.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
	// logFormat is --log-format: "text" or "json"; empty means
	// $MINCA_LOG_FORMAT, else text.
	logFormat string
	// progressEvery is how often progress is logged when stderr is not a
	// terminal; 0 means the default, 5 s. Tests shorten it.
	progressEvery time.Duration
	// cacheDir is where folder: and s3:// stores keep their local indexes
	// (store.Options.CacheDir); empty means the default, the user's cache
	// directory. Tests set it: each its own, as each device has its own.
	cacheDir string
	// damage is what the verb's stores were found to lack (bad segments
	// of a folder: or s3:// store, Store.Damage): said at the end on
	// stderr (before the verb's own error, if any), and the exit is 1
	// where it would have been 0 or 3.
	damage []error
}

// logger is the verbs' structured log on stderr (log/slog): text, or JSON
// with --log-format json.
func (s *stdio) logger() *slog.Logger {
	o := &slog.HandlerOptions{Level: slog.LevelInfo}
	if s.format() == "json" {
		return slog.New(slog.NewJSONHandler(s.err, o))
	}
	return slog.New(slog.NewTextHandler(s.err, o))
}

func (s *stdio) format() string {
	if s.logFormat != "" {
		return s.logFormat
	}
	if f := os.Getenv("MINCA_LOG_FORMAT"); f == "json" {
		return f
	}
	return "text"
}

// setLogFormat is --log-format's setter, shared by every verb.
func (s *stdio) setLogFormat(v string) error {
	if v != "text" && v != "json" {
		return fmt.Errorf("%q: want text or json", v)
	}
	s.logFormat = v
	return nil
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
		{"sign", "sign unsigned versions with a key file (02 §3.3)", runSign},
		{"verify", "check versions: shape, signature, capability gate (02 §3.3, §4.6, §9.3)", runVerify},
		{"key", "record keys: owner part, fresh keys, onePer keys (02 §4.1, §7.3)", runKey},
		{"note", "notes: issue one from an account key, check them (06 §1.2, §2.5)", runNote},
		{"collection", "collection definitions: check one, validate bodies against its schema (02 §6)", runCollection},
		{"tags", "print the topic tags versions must carry under a definition (02 §8)", runTags},
		{"bench", "run a benchmark suite and print its results (ratios against a bound, medians)", runBench},
		{"negentropy-harness", "speak the reference negentropy test harness protocol on stdin/stdout", runNegentropyHarness},
		{"mirror", "couple a store to a folder or S3 both ways: export, import, compact", runMirror},
		{"backup", "write a store's new versions to a folder or S3 as segments (resumable)", runBackup},
		{"restore", "admit every version in a folder's or bucket's segments into a store (resumable)", runRestore},
		{"compact", "rewrite this store's segments in a folder or S3 into fewer, stubs for superseded bodies", runCompact},
		{"serve", "run the node: its store, mirrors, local API (docs/api.md) and peers (docs/sync.md)", runServe},
		{"sync", "run one reconciliation of a store's spaces with a peer (docs/sync.md §7)", runSync},
		{"peers", "list a running node's peers and their sync sessions", runPeers},
		{"connect", "connect this node to an account at its home, by code: a records-only note, no seed (06 §3)", runConnect},
		{"home", "run a minimal account home: the connect page, programs by code, apps, connections (06 §2–§3)", runHome},
		{"init", "make a node directory: an account key, a session, the API token", runInit},
		{"space", "spaces: make one, join, invite, change who is in it (through the node); read a space's state from a store", runSpace},
		{"put", "write a record's next version through the node (02 §4)", runPut},
		{"get", "print a record's readable current version", runGet},
		{"file", "files versions name: write one's bytes, list a record's (02 §3.1)", runFile},
		{"delete", "write a delete of a record through the node", runDelete},
		{"history", "list every held version of a record", runHistory},
		{"query", "answer a query (06 §2.11) through the node", runQuery},
		{"watch", "print a space's events as they happen, from a cursor", runWatch},
		{"carry", "run a carrier: keep an account's spaces online and backed up without reading them (06 §4)", runCarry},
		{"carrier", "the account's carriers: add one (printing its carry grant), remove, list (06 §4.2)", runCarrier},
		{"store", "version stores: import, get, history, export, stats, check (pebble:, sqlite:, memory:, folder:, s3://)", runStore},
	}
	sort.Slice(v, func(i, j int) bool { return v[i].name < v[j].name })
	return v
}

// run is the whole command line: it parses the global flags, runs the
// verb and returns the exit code.
func run(ctx context.Context, args []string, s *stdio) int {
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "-h" || a == "--help" || a == "-help":
			printUsage(s.out)
			return exitOK
		case a == "--version" || a == "-version":
			printVersion(s.out)
			return exitOK
		case a == "--log-format" || a == "-log-format":
			if len(args) < 2 {
				fmt.Fprintln(s.err, "minca: --log-format needs a value: text or json")
				return exitUsage
			}
			if err := s.setLogFormat(args[1]); err != nil {
				fmt.Fprintf(s.err, "minca: --log-format %v\n", err)
				return exitUsage
			}
			args = args[2:]
			continue
		case strings.HasPrefix(a, "--log-format=") || strings.HasPrefix(a, "-log-format="):
			_, v, _ := strings.Cut(a, "=")
			if err := s.setLogFormat(v); err != nil {
				fmt.Fprintf(s.err, "minca: --log-format %v\n", err)
				return exitUsage
			}
			args = args[1:]
			continue
		}
		break
	}
	if len(args) == 0 {
		printUsage(s.err)
		return exitUsage
	}
	if args[0] == "help" {
		if len(args) == 1 {
			printUsage(s.out)
			return exitOK
		}
		// minca help VERB [SUBVERB]: the verb's own --help.
		args = append(append([]string{}, args[1:]...), "--help")
	}
	for _, v := range verbs() {
		if v.name != args[0] {
			continue
		}
		err := v.run(ctx, s, args[1:])
		return exitCode(ctx, s, fullName(v, args[1:]), err)
	}
	fmt.Fprintf(s.err, "minca: unknown verb %q\n\n", args[0])
	printUsage(s.err)
	return exitUsage
}

// fullName is what an error message calls the verb run: "store import"
// rather than "store".
func fullName(v verb, args []string) string {
	if len(args) > 0 {
		for _, sub := range subverbsOf(v.name) {
			if sub.name == args[0] {
				return v.name + " " + sub.name
			}
		}
	}
	return v.name
}

// subverbsOf lists a verb's subverbs, none for most.
func subverbsOf(name string) []verb {
	switch name {
	case "store":
		return storeSubverbs()
	case "key":
		return keySubverbs()
	case "note":
		return noteSubverbs()
	case "collection":
		return collectionSubverbs()
	case "bench":
		return benchSuites()
	case "space":
		return spaceSubverbs()
	case "carrier":
		return carrierSubverbs()
	case "file":
		return fileSubverbs()
	}
	return nil
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: minca [--log-format text|json] VERB [flags] [ARGS]")
	fmt.Fprintln(w, "       minca help VERB | minca VERB --help | minca --version")
	fmt.Fprintln(w)
	for _, v := range verbs() {
		fmt.Fprintf(w, "  %-20s %s\n", v.name, v.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, exitCodesHelp)
}

// exitCodesHelp closes the usage text: the contract scripts rely on.
const exitCodesHelp = `Flags may follow arguments; "--" ends them. --store defaults to $MINCA_STORE;
logs are text, or JSON with --log-format json (or MINCA_LOG_FORMAT=json).
Exit codes: 0 ok; 1 a check failed (a refused version, a bad segment, a
problem found); 2 bad usage or unreadable input; 3 not found (a record, a
store); 4 unreachable, try again; 130 interrupted by SIGINT, 143 by SIGTERM
(what was done before is kept: run the verb again to go on).
`
