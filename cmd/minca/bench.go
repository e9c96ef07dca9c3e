package main

import (
	"context"

	"github.com/minca-go/minca/bench"
)

// benchSuites are the subverbs of `minca bench`, one per suite in bench/.
func benchSuites() []verb {
	return []verb{
		{"records", "canonicalise, hash, verify and sign a 600-byte version, against a bare ECDSA verify", runBenchRecords},
		{"mirror", "back up and restore through segments: bytes and requests per version, restore against a file import, listing", runBenchMirror},
		{"engine-import", "import through full admission on Pebble and SQLite, against the bare verify rate", runBenchEngineImport},
		{"engine-read", "read a record's current version, against a bare Pebble point read", runBenchEngineRead},
		{"engine-memory", "peak RSS of `minca store import` of a large corpus (child process)", runBenchEngineMemory},
	}
}

// runBench runs one benchmark suite and prints its result as JSON.
func runBench(ctx context.Context, s *stdio, args []string) error {
	return runSubverb(ctx, s, "bench", benchSuites(), args)
}

func runBenchRecords(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench records", "bench records [--rounds N]\n\nMeasures the records core on a typical 600-byte version; prints medians as JSON.")
	rounds := fs.Int("rounds", 5, "rounds to take the median of")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	r, err := bench.RunRecords(ctx, bench.RecordsConfig{Rounds: *rounds})
	if err != nil {
		return err
	}
	return writeJSON(s, r)
}
