package main

import (
	"context"

	"github.com/minca-go/minca/bench"
)

func runBenchNode(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench node", "bench node [--writes N] [--writers W] [--rounds R] [--events E] [--dir DIR]\n\nMeasures local writes through the node's full path (derive, place, judge,\nsign, store) against bare ECDSA sign + verify of the same versions, and the\nlatency from Put to a subscriber, directly and through the HTTP API.")
	writes := fs.Int("writes", 20_000, "records each round writes")
	writers := fs.Int("writers", 64, "goroutines writing at once")
	rounds := fs.Int("rounds", 3, "rounds to take the median of")
	events := fs.Int("events", 1000, "writes the event latencies are measured on")
	dir := fs.String("dir", "", "where the nodes go (default: a temporary directory)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	r, err := bench.RunNode(ctx, bench.NodeConfig{Dir: *dir, Writes: *writes, Writers: *writers, Rounds: *rounds, Events: *events})
	if err != nil {
		return err
	}
	return writeJSON(s, r)
}
