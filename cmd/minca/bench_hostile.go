package main

import (
	"context"
	"os"
	"strings"

	"github.com/minca-go/minca/bench"
)

func runBenchHostile(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench hostile", "bench hostile [--versions N] [--rounds R] [--attacks NAME,...] [--dir DIR]\n\nMeasures a node under attack (docs/sync.md, Limits): an honest sync of N\nversions from 127.0.0.1, timed alone and while each attack runs from\n127.0.0.2 against the same node, in a child process; the node's peak\nresident memory during each. Prints the medians as JSON.")
	versions := fs.Int("versions", 40_000, "`N` versions the node serves and the honest peer syncs")
	rounds := fs.Int("rounds", 3, "`N` rounds of every case to take the median of")
	only := fs.String("attacks", "", "the attacks to run, `NAME,...` as the output names them (default: all)")
	dir := fs.String("dir", "", "where the stores go, a `DIR` (default: a temporary directory)")
	serve := fs.String("serve", "", "serve the store at `DIR` as the node attacked (the bench runs itself so)")
	attack := fs.String("attack", "", "run the attack `NAME` against --url until interrupted (the bench runs itself so)")
	url := fs.String("url", "", "with --attack: the node's peer `URL`")
	space := fs.String("space", "", "with --attack: the `SPACE` attacked")
	from := fs.String("from", "", "with --attack: the loopback `ADDRESS` to attack from")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("bench hostile takes no arguments")
	}
	if *serve != "" {
		return bench.ServeTarget(ctx, *serve, s.out)
	}
	if *attack != "" {
		return bench.RunAttack(ctx, *attack, *url, *space, *from, s.out)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	p, done := benchProgress(s, "bench hostile")
	var names []string
	if *only != "" {
		names = strings.Split(*only, ",")
	}
	r, err := bench.RunHostile(ctx, bench.HostileConfig{Minca: self, Dir: *dir, Versions: *versions, Rounds: *rounds, Attacks: names, Progress: p})
	done()
	if err != nil {
		return err
	}
	return writeJSON(s, r)
}
