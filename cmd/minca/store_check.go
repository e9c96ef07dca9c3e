package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/record"
)

func runStoreCheck(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store check", "store check --store URL\n\nRe-verifies every version (id, signature, body hash: 02 §3.3) and every index\nagainst the versions. Prints each problem as a JSON line {\"problem\"}; exit 1\nwhen there is any.")
	url := storeFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	// A folder: or s3: store's durable copy is its segments: each is
	// verified before the local index is opened (which reads them).
	probs, err := verifyBlobStore(ctx, s, *url)
	if err != nil {
		return err
	}
	st, err := openStore(*url, nil)
	if errors.Is(err, mirror.ErrBadSegment) && len(probs) > 0 {
		// Named by Verify; the index does not open past a bad segment,
		// so only the segments were checked.
		err = nil
	}
	if err != nil {
		return err
	}
	if st != nil {
		defer st.Close()
		var more []string
		more, err = st.Check(ctx, &record.Verifier{})
		probs = append(probs, more...)
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

// verifyBlobStore verifies every segment of the blob store a folder: or
// s3: store URL names (mirror.Verify) and returns each problem; for other
// stores, nothing.
func verifyBlobStore(ctx context.Context, s *stdio, url string) ([]string, error) {
	if !strings.HasPrefix(url, "folder:") && !strings.HasPrefix(url, "s3://") {
		return nil, nil
	}
	b, err := openBlobs(ctx, url, false, s.logger())
	if err != nil {
		return nil, err
	}
	ps, err := mirror.Verify(ctx, b, nil)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", url, err)
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "segment " + p.String()
	}
	return out, nil
}
