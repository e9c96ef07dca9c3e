package main

import (
	"bufio"
	"context"

	"github.com/minca-go/minca/internal/progress"
)

func runStoreExport(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store export", "store export [--store URL] [--space ID]\n\nPrints everything held, as it travels (stubs as stubs), as JSON lines in sync\norder (createdAt, then id digest), space by space.")
	sp := storeFlags(fs, false)
	space := fs.String("space", "", "export only this space `ID`")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 0 {
		return usageError("store export takes no arguments")
	}
	sto, err := sp.open(ctx, readStore)
	if err != nil {
		return err
	}
	defer sto.Close()
	st := sto.Engine()
	// Progress against the store's count of versions: all of them, or
	// more than one space holds when --space picks one.
	stats, err := st.Stats(ctx)
	if err != nil {
		return sp.failed(err)
	}
	meter := newMeter(s, s.logger(), "store export")
	defer meter.Done()
	w := bufio.NewWriterSize(s.out, 1<<16)
	var n int64
	for raw, err := range st.ExportJSON(ctx, *space) {
		if err != nil {
			w.Flush()
			return sp.failed(err)
		}
		if _, err := w.Write(append(raw, '\n')); err != nil {
			return err
		}
		if n++; n%1000 == 0 {
			meter.Update(progress.Status{Text: progress.Count(n) + " versions", Done: n, Total: stats.Versions})
		}
	}
	return w.Flush()
}
