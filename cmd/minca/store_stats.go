package main

import (
	"context"
)

func runStoreStats(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store stats", "store stats [--store URL]\n\nPrints, as JSON, what the store holds: spaces, versions, whole, stubs, waiting,\nbytes of bodies and envelopes, files, changes.")
	url := storeFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	st, err := openStore(*url, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	stats, err := st.Stats(ctx)
	if err != nil {
		return failed(err)
	}
	return writeJSON(s, stats)
}
