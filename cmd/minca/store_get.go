package main

import (
	"context"
	"errors"

	"github.com/minca-go/minca/engine"
)

func runStoreGet(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store get", "store get [--store URL] SPACE KEY\n\nPrints the record's readable current version (02 §4.3, §9.5) as canonical JSON.\nExit 3 when the record is not held, or reads as not held.")
	sp := storeFlags(fs, false)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 2 {
		return usageError("store get takes SPACE and KEY")
	}
	sto, err := sp.open(ctx, readStore)
	if err != nil {
		return err
	}
	defer sto.Close()
	st := sto.Engine()
	raw, err := st.CurrentJSON(ctx, fs.Arg(0), fs.Arg(1))
	if errors.Is(err, engine.ErrNotFound) {
		return notFound("record %s in space %s is not held", fs.Arg(1), fs.Arg(0))
	}
	if err != nil {
		return sp.failed(err)
	}
	_, err = s.out.Write(append(raw, '\n'))
	return err
}
