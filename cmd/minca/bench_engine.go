package main

import (
	"context"
	"os"

	"github.com/minca-go/minca/bench"
)

func runBenchEngineImport(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench engine-import", "bench engine-import [--versions N] [--rounds N] [--store pebble|sqlite|both] [--corpus FILE] [--dir DIR]\n\nImports a corpus (records edited three times on average) through full admission\ninto Pebble and SQLite (or the one --store names: the other's figures are then\nzero); prints versions/s against the bare ECDSA-verify rate of the same versions\non every core, medians of the rounds, as JSON.")
	versions := fs.Int("versions", 100_000, "`N` versions in the generated corpus")
	rounds := fs.Int("rounds", 3, "`N` rounds to take the median of")
	store := fs.String("store", "both", "the `BACKEND`: pebble, sqlite or both")
	corpus := fs.String("corpus", "", "a corpus `FILE` (JSON lines) instead of a generated one")
	dir := fs.String("dir", "", "`DIR` where stores and the corpus go (default a temporary directory)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	stores, err := benchStores(*store)
	if err != nil {
		return err
	}
	p, done := benchProgress(s, "bench engine-import")
	r, err := bench.RunImport(ctx, bench.ImportConfig{Corpus: *corpus, CorpusConfig: bench.CorpusConfig{Versions: *versions}, Rounds: *rounds, Dir: *dir, Stores: stores, Progress: p})
	done()
	if err != nil {
		return failed(err)
	}
	return writeJSON(s, r)
}

func runBenchEngineRead(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench engine-read", "bench engine-read [--versions N] [--rounds N] [--cache BYTES]\n\nReads records' current versions from the engine on Pebble against bare Pebble\npoint reads of values of the same size; prints the ratio as JSON.")
	versions := fs.Int("versions", 100_000, "`N` versions imported")
	rounds := fs.Int("rounds", 5, "`N` rounds to take the median of")
	cache := fs.Int64("cache", 0, "each Pebble store's block cache in `BYTES` (default the backend's, 64 MiB)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	p, done := benchProgress(s, "bench engine-read")
	r, err := bench.RunRead(ctx, bench.ReadConfig{CorpusConfig: bench.CorpusConfig{Versions: *versions}, Rounds: *rounds, CacheSize: *cache, Progress: p})
	done()
	if err != nil {
		return failed(err)
	}
	return writeJSON(s, r)
}

func runBenchEngineMemory(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench engine-memory", "bench engine-memory [--versions N] [--rounds N] [--store pebble|sqlite|both] [--corpus FILE] [--dir DIR] [--minca PATH]\n\nRuns `minca store import --judge roots` of a corpus as a child process (this\nbinary, or --minca) into each backend and prints, as JSON, its peak RSS and the store's\nbytes on disk against the bytes of the versions it holds.")
	versions := fs.Int("versions", 1_000_000, "`N` versions in the generated corpus")
	rounds := fs.Int("rounds", 1, "`N` imports to take the median of")
	store := fs.String("store", "both", "the `BACKEND`: pebble, sqlite or both")
	corpus := fs.String("corpus", "", "a corpus `FILE` (JSON lines) instead of a generated one")
	dir := fs.String("dir", "", "`DIR` where the store and the corpus go (default a temporary directory)")
	minca := fs.String("minca", "", "the minca binary `PATH` whose import is measured, e.g. an earlier build (default this one)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	self := *minca
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return failed(err)
		}
	}
	stores, err := benchStores(*store)
	if err != nil {
		return err
	}
	p, done := benchProgress(s, "bench engine-memory")
	r, err := bench.RunMemory(ctx, bench.MemoryConfig{Minca: self, Stores: stores, Corpus: *corpus, Dir: *dir,
		CorpusConfig: bench.CorpusConfig{Versions: *versions}, Rounds: *rounds, Progress: p})
	done()
	if err != nil {
		return failed(err)
	}
	return writeJSON(s, r)
}

// benchStores reads a bench verb's --store: the one backend it names, or
// nil (each bench's default, both) for "both".
func benchStores(store string) ([]string, error) {
	switch store {
	case "both":
		return nil, nil
	case "pebble", "sqlite":
		return []string{store}, nil
	}
	return nil, usageError("--store %q: want pebble, sqlite or both", store)
}
