package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

func runStoreCheck(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store check", "store check --store URL\n\nRe-verifies every version (id, signature, body hash: 02 §3.3) and every index\nagainst the versions. Prints each problem as a JSON line {\"problem\"}; exit 1\nwhen there is any.")
	url := storeFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	var probs []string
	sto, err := openStore(ctx, *url, readStore)
	if err == nil {
		defer sto.Close()
		probs, err = sto.Engine().Check(ctx, &record.Verifier{})
	} else if !errors.Is(err, engine.ErrCorrupt) {
		return err
	}
	if errors.Is(err, engine.ErrCorrupt) { // damage met opening or reading the store: a problem
		probs, err = append(probs, err.Error()), nil
	}
	for _, p := range probs {
		if werr := writeJSONLine(s.out, canonical.NewObject("problem", p)); werr != nil {
			return werr
		}
	}
	if err != nil {
		return failed(err)
	}
	if len(probs) > 0 {
		return failed(fmt.Errorf("%d problems", len(probs)))
	}
	stats, _ := sto.Engine().Stats(ctx)
	fmt.Fprintf(s.err, "store %s is sound: %d versions, %d waiting\n", *url, stats.Versions, stats.Waiting)
	return nil
}
