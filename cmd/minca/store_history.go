package main

import (
	"context"

	"github.com/minca-go/minca/canonical"
)

func runStoreHistory(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store history", "store history [--store URL] SPACE KEY\n\nLists every held version of the record, newest first by 02 §4.3, one JSON line\neach: {\"standing\":\"stands|withdrawn\",\"stored\":\"whole|stub\",\"version\":{…}},\nstubs as stubs. Exit 3 when none is held.")
	sp := storeFlags(fs, false)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 2 {
		return usageError("store history takes SPACE and KEY")
	}
	sto, err := sp.open(ctx, readStore)
	if err != nil {
		return err
	}
	defer sto.Close()
	st := sto.Engine()
	hs, err := st.History(ctx, fs.Arg(0), fs.Arg(1))
	if err != nil {
		return sp.failed(err)
	}
	if len(hs) == 0 {
		return notFound("record %s in space %s is not held", fs.Arg(1), fs.Arg(0))
	}
	for _, h := range hs {
		o := canonical.NewObject("standing", h.Verdict.String(), "stored", h.Stored.String(), "version", h.Version.Object())
		if err := writeJSONLine(s.out, o); err != nil {
			return err
		}
	}
	return nil
}
