package main

import (
	"context"

	"github.com/minca-go/minca/bench"
)

func runBenchNode(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench node", "bench node [--writes N] [--writers W] [--rounds R] [--events E] [--dir DIR]\n\nMeasures local writes through the node's full path (derive, place, judge,\nsign, store, index) against bare ECDSA sign + verify of the same versions, and the\nlatency from Put to a subscriber, directly and through the HTTP API.")
	writes := fs.Int("writes", 20_000, "`N` records each round writes")
	writers := fs.Int("writers", 64, "`N` goroutines writing at once")
	rounds := fs.Int("rounds", 3, "`N` rounds to take the median of")
	events := fs.Int("events", 1000, "`N` writes the event latencies are measured on")
	dir := fs.String("dir", "", "where the nodes go, a `DIR` (default: a temporary directory)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("bench node takes no arguments")
	}
	p, done := benchProgress(s, "bench node")
	r, err := bench.RunNode(ctx, bench.NodeConfig{Dir: *dir, Writes: *writes, Writers: *writers, Rounds: *rounds, Events: *events, Progress: p})
	done()
	if err != nil {
		return err
	}
	return writeJSON(s, r)
}
