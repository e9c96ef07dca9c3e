package main

import (
	"context"

	"github.com/minca-go/minca/bench"
)

func runBenchSync(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench sync", "bench sync [--versions N] [--big N] [--live N] [--peers P --writers W --per-writer N] [--rounds R] [--dir DIR]\n\nMeasures sync between nodes (docs/sync.md §7): N versions into an empty\nstore over loopback WebSocket against importing them; two stores of --big\nversions 1% different, wire bytes against negentropy's plus the missing\nversions'; live push latency over WebSocket and WebRTC; one server with P\npeers, W of them writing.")
	versions := fs.Int("versions", 100_000, "`N` versions synced into an empty store")
	big := fs.Int("big", 200_000, "`N` versions in each of the two stores 1% different")
	live := fs.Int("live", 300, "`N` versions the push latency is measured on")
	peersN := fs.Int("peers", 200, "`P` peers connected to one server")
	writers := fs.Int("writers", 20, "`W` of the peers writing")
	perWriter := fs.Int("per-writer", 25, "`N` versions each writer writes")
	rounds := fs.Int("rounds", 3, "`N` rounds of the first measure to take the median of")
	dir := fs.String("dir", "", "where the stores go, a `DIR` (default: a temporary directory)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("bench sync takes no arguments")
	}
	if *writers > *peersN {
		return usageError("--writers %d: at most --peers (%d)", *writers, *peersN)
	}
	p, done := benchProgress(s, "bench sync")
	r, err := bench.RunSync(ctx, bench.SyncConfig{Dir: *dir, Versions: *versions, Big: *big, Live: *live,
		Peers: *peersN, Writers: *writers, PerWriter: *perWriter, Rounds: *rounds, Progress: p})
	done()
	if err != nil {
		return err
	}
	return writeJSON(s, r)
}
