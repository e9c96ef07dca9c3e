package main

import (
	"context"

	"github.com/minca-go/minca/bench"
)

func runBenchQuery(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench query", "bench query [--records N] [--rounds N] [--cache BYTES] [--dir DIR]\n\nFills a collection of N records (Pebble, with its index) and measures queries —\nthe first 100, a where on an indexed and on an unindexed field (1% pass), the\nnewest 100 — against a bare Pebble range scan of 100 keys holding the same\nversions; prints medians and ratios as JSON.")
	records := fs.Int("records", 1_000_000, "`N` records in the collection")
	rounds := fs.Int("rounds", 5, "`N` rounds to take the median of")
	cache := fs.Int64("cache", 0, "each Pebble store's block cache, `BYTES` (default the backend's, 64 MiB)")
	dir := fs.String("dir", "", "the `DIR`ectory the stores go in, kept for a later run with as many records (default a temporary directory)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	r, err := bench.RunQuery(ctx, bench.QueryConfig{Records: *records, Rounds: *rounds, CacheSize: *cache, Dir: *dir})
	if err != nil {
		return failed(err)
	}
	return writeJSON(s, r)
}
