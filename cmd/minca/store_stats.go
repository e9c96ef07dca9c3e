package main

import (
	"context"
)

func runStoreStats(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store stats", "store stats [--store URL]\n\nPrints, as JSON, what the store holds: spaces, versions, whole, stubs, waiting,\nbytes of bodies and envelopes, files, changes.")
	sp := storeFlags(fs, false)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	sto, err := sp.open(ctx, readStore)
	if err != nil {
		return err
	}
	defer sto.Close()
	st := sto.Engine()
	stats, err := st.Stats(ctx)
	if err != nil {
		return sp.failed(err)
	}
	return writeJSON(s, stats)
}
