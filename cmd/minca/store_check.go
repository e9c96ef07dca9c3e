package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/internal/progress"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

func runStoreCheck(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store check", "store check --store URL [--judge full|roots]\n\nRe-verifies every version (id, signature, body hash: 02 §3.3) and every index\nagainst the versions, and reads every held file against its hash and size\n(docs/stores.md, Files); with the full judge (the default), also judges every\nversion again against the replay of its space's access history and names each\nwhose standing differs. Prints each problem as a JSON line {\"problem\"}; exit 1\nwhen there is any.")
	sp := storeFlags(fs, false)
	sp.listsDamage = true // verifyBlobStore lists each bad segment
	judgeFlag(fs, sp)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	// A folder: or s3: store's durable copy is its segments: each is
	// verified before the local index is opened (which reads them).
	probs, err := verifyBlobStore(ctx, s, sp)
	if err != nil {
		return err
	}
	sto, err := sp.open(ctx, readStore)
	switch {
	case err == nil:
		defer sto.Close()
		if d := sto.Damage(); d != nil && len(probs) == 0 { // gone bad since verified
			probs = append(probs, d.Error())
		}
		var more []string
		more, err = sto.Engine().Check(ctx, &record.Verifier{})
		probs = append(probs, more...)
		if err == nil && len(probs) == 0 && sp.judge == "full" {
			probs, err = judge.Recheck(ctx, sto.Engine(), noteChecker())
		}
	case !errors.Is(err, engine.ErrCorrupt):
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
		return failed(fmt.Errorf("%d %s", len(probs), plural(len(probs), "problem", "problems")))
	}
	stats, _ := sto.Engine().Stats(ctx)
	fmt.Fprintf(s.err, "store %s is sound: %d versions, %d waiting\n", sp.url, stats.Versions, stats.Waiting)
	return nil
}

// verifyBlobStore verifies every segment of the blob store a folder: or
// s3: store URL names (mirror.Verify) and returns each problem; for other
// stores, nothing.
func verifyBlobStore(ctx context.Context, s *stdio, sp *storeSpec) ([]string, error) {
	url := sp.url
	if !strings.HasPrefix(url, "folder:") && !strings.HasPrefix(url, "s3://") {
		return nil, nil
	}
	b, err := sp.openBlobs(ctx, nil, url, false)
	if err != nil {
		return nil, err
	}
	meter := newMeter(s, s.logger(), "store check")
	defer meter.Done()
	ps, err := mirror.Verify(ctx, b, &mirror.VerifyOptions{Progress: func(vs mirror.VerifyStats) {
		meter.Update(progress.Status{Text: fmt.Sprintf("%s of %s segments verified, %s", progress.Count(int64(vs.Segments)), progress.Count(int64(vs.Total)), bytesText(vs.Bytes)),
			Done: int64(vs.Segments), Total: int64(vs.Total)})
	}})
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", url, err)
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "segment " + p.String()
	}
	return out, nil
}

// plural is one or many, as n says.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
