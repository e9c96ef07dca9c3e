package main

import (
	"context"

	"github.com/minca-go/minca/bench"
)

func runBenchSpaces(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench spaces", "bench spaces [--members N] [--changes N] [--records N] [--import N] [--judged N] [--rounds N] [--dir DIR]\n\nBuilds a space of N members with an access history of --changes changes and\n--records records, in two Pebble stores (the full judge, and the judge that lets\nevery root write), and prints as JSON, medians of the rounds, each against a\nbound of the same run: replaying the history from cold (and its heap), loading\nit from the store, judging a version whose seen is the current state (goal ≤\n1.2× today's judge) and importing --import versions (goal ≥ 0.9×).")
	members := fs.Int("members", 10_000, "`N` members of the space")
	changes := fs.Int("changes", 100_000, "`N` access changes (at least --members + 1)")
	records := fs.Int("records", 1_000_000, "`N` records the space holds before the measured imports")
	imp := fs.Int("import", 100_000, "`N` versions in each round's measured import")
	judged := fs.Int("judged", 2_000, "`N` versions judged one by one")
	rounds := fs.Int("rounds", 3, "`N` rounds to take the medians of")
	dir := fs.String("dir", "", "the `DIR`ectory the stores go in (default a temporary directory)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if *members < 1 || *changes <= *members || *records < 0 || *imp < 1 || *judged < 1 || *rounds < 1 {
		return usageError("sizes are positive, and --changes more than --members")
	}
	held := *records
	if held == 0 {
		held = -1 // none, not the default
	}
	r, err := bench.RunSpaces(ctx, bench.SpacesConfig{Members: *members, Changes: *changes, Records: held, Import: *imp,
		Judged: *judged, Rounds: *rounds, Dir: *dir})
	if err != nil {
		return failed(err)
	}
	return writeJSON(s, r)
}
