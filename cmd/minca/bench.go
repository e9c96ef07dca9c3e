package main

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/minca-go/minca/bench"
	"github.com/minca-go/minca/internal/progress"
	"github.com/minca-go/minca/negentropy/negbench"
)

// benchSuites are the subverbs of `minca bench`, one per suite in bench/.
func benchSuites() []verb {
	return []verb{
		{"records", "canonicalise, hash, verify and sign a 600-byte version, against a bare ECDSA verify", runBenchRecords},
		{"mirror", "back up and restore through segments: bytes and requests per version, restore against a file import, listing", runBenchMirror},
		{"engine-import", "import through full admission on Pebble and SQLite, against the bare verify rate", runBenchEngineImport},
		{"engine-read", "read a record's current version, against a bare Pebble point read", runBenchEngineRead},
		{"query", "queries on a collection of a million records, against a bare Pebble range scan of 100 keys", runBenchQuery},
		{"negentropy", "reconcile two sets of a million items at 0.1%, 1% and 10% difference: round trips, bytes, time", runBenchNegentropy},
		{"node", "local writes through the node's full path against bare ECDSA sign+verify; event latency, direct and over HTTP", runBenchNode},
		{"sync", "sync between nodes: into an empty store against import; wire bytes against negentropy's; live push latency; one server, many peers", runBenchSync},
		{"hostile", "an honest sync alone and under each attack on a node's limits; the node's peak memory (child process)", runBenchHostile},
		{"engine-memory", "peak RSS of `minca store import` of a large corpus (child process)", runBenchEngineMemory},
		{"spaces", "a large space under the full judge: replay, judging and import against today's judge", runBenchSpaces},
		{"seal", "seal and open a 600-byte body of a private space, against a bare AES-256-GCM of the same bytes", runBenchSeal},
		{"carry", "a carrier taking in a private space's versions without the key, against a member with it", runBenchCarry},
		{"files", "upload, sync and read of files of 4 KB, 1 MB and 256 MB between two node processes, against loopback TCP, a file copy and store import", runBenchFiles},
		{"private-import", "import a private space's versions by a member and by a node without the key, against a public space's", runBenchPrivateImport},
	}
}

// benchProgress is a suite's progress line: the step under way, and the
// share of steps done with an ETA. done clears it.
func benchProgress(s *stdio, label string) (p bench.Progress, done func()) {
	m := newMeter(s, s.logger(), label)
	return func(step string, d, total int) {
		m.Update(progress.Status{Text: step, Done: int64(d), Total: int64(total)})
	}, m.Done
}

// runBench runs one benchmark suite and prints its result as JSON.
func runBench(ctx context.Context, s *stdio, args []string) error {
	return runSubverb(ctx, s, "bench", benchSuites(), args)
}

func runBenchRecords(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench records", "bench records [--rounds N]\n\nMeasures the records core on a typical 600-byte version; prints medians as JSON.")
	rounds := fs.Int("rounds", 5, "`N` rounds to take the median of")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	p, done := benchProgress(s, "bench records")
	r, err := bench.RunRecords(ctx, bench.RecordsConfig{Rounds: *rounds, Progress: p})
	done()
	if err != nil {
		return err
	}
	return writeJSON(s, r)
}

func runBenchNegentropy(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench negentropy", "bench negentropy [--n N] [--diffs 0.001,0.01,0.1] [--runs R] [--storage tree|vector] [--frame-size-limit B] [--markdown]\n\nReconciles two sets of about N items each in process and prints, per\ndifference, round trips, bytes each way against the ideal (differing ids ×\n32) and each side's time against building the fingerprint tree once.")
	n := fs.Int("n", 1_000_000, "`N` items on each side, about")
	diffs := fs.String("diffs", "0.001,0.01,0.1", "`SHARES` of the union held by one side only, comma-separated")
	runs := fs.Int("runs", 3, "`N` runs of each case; medians are reported")
	storage := fs.String("storage", "tree", "`STORAGE`: tree, tree-insert or vector")
	limit := fs.Uint64("frame-size-limit", 0, "frame size limit in `BYTES` on both sides (0: none; else at least 4096)")
	markdown := fs.Bool("markdown", false, "print a Markdown table instead of JSON")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	var ds []float64
	for _, f := range strings.Split(*diffs, ",") {
		d, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || d < 0 || d >= 1 {
			return usageError("--diffs: %q is not a share in [0, 1)", f)
		}
		ds = append(ds, d)
	}
	p, done := benchProgress(s, "bench negentropy")
	r, err := negbench.Run(negbench.Config{N: *n, Diffs: ds, Runs: *runs, Storage: *storage, FrameSizeLimit: *limit, Seed: 1, Progress: p})
	done()
	if err != nil {
		return err
	}
	if *markdown {
		_, err = io.WriteString(s.out, r.Markdown())
		return err
	}
	return writeJSON(s, r)
}
