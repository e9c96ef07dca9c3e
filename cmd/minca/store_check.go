package main

import (
	"context"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
)

func runStoreCheck(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store check", "store check --store URL\n\nRe-verifies every version (id, signature, body hash: 02 §3.3) and every index\nagainst the versions; with the full judge (the default), also judges every\nversion again against the replay of its space's access history and names each\nwhose standing differs. Prints each problem as a JSON line {\"problem\"}; exit 1\nwhen there is any.")
	url := storeFlag(fs)
	which := judgeFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	st, err := openStore(*url, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	if *which != "full" && *which != "roots" {
		return usageError("--judge %q: full or roots", *which)
	}
	probs, err := st.Check(ctx, &record.Verifier{})
	if err == nil && len(probs) == 0 && *which == "full" {
		probs, err = node.Recheck(ctx, st, noteChecker())
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
	stats, _ := st.Stats(ctx)
	fmt.Fprintf(s.err, "store %s is sound: %d versions, %d waiting\n", *url, stats.Versions, stats.Waiting)
	return nil
}
