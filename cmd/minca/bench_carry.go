package main

import (
	"context"

	"github.com/minca-go/minca/bench"
)

func runBenchCarry(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench carry", "bench carry [--versions N] [--rounds N]\n\nA carrier taking in a private space's versions — judged as a peer without\nthe key does (06 §4.1), through the carrier — against a member's store taking\nin the same versions with the key (every body opened, tags checked), per\nversion, in the same run; prints medians as JSON (goal: ratio ≤ 1).")
	versions := fs.Int("versions", 5000, "`N` versions a round")
	rounds := fs.Int("rounds", 5, "`N` rounds to take the median of")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if *versions < 1 || *rounds < 1 {
		return usageError("--versions and --rounds are at least 1")
	}
	r, err := bench.RunCarry(ctx, bench.CarryConfig{Versions: *versions, Rounds: *rounds})
	if err != nil {
		return failed(err)
	}
	return writeJSON(s, r)
}
