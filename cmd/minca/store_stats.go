package main

import (
	"context"

	"github.com/minca-go/minca/engine"
)

// maxSourcesShown is how many sources of waiting versions store stats
// names, the most bytes first.
const maxSourcesShown = 10

func runStoreStats(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store stats", "store stats [--store URL] [--tables]\n\nPrints, as JSON, what the store holds: spaces, versions, whole, stubs, bytes of\nbodies and envelopes, files, changes; and the versions waiting for what they\nname (02 §9.5): how many, their bytes, how many were dropped past the bounds\nor expired, and the sources holding the most (docs/sync.md §7.3). --tables\nreads every key and adds, for each table of the key layout, its entries and\nthe bytes of their keys and values (docs/stores.md).")
	sp := storeFlags(fs, false)
	withTables := fs.Bool("tables", false, "add what each table of the key layout holds (reads every key)")
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
	srcs, err := st.WaitingSources(maxSourcesShown)
	if err != nil {
		return sp.failed(err)
	}
	var tables []engine.TableBytes
	if *withTables {
		if tables, err = st.Tables(ctx); err != nil {
			return sp.failed(err)
		}
	}
	return writeJSON(s, struct {
		engine.Stats
		WaitingSources []engine.WaitingSource `json:"waitingSources"`
		Tables         []engine.TableBytes    `json:"tables,omitempty"`
	}{stats, srcs, tables})
}
