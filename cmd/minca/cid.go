package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"

	"github.com/minca-go/minca/canonical"
)

// runCID prints a content id (02 §2).
func runCID(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "cid", "cid [--raw] < INPUT\n\nPrints the content id (02 §2) of the canonical form of the JSON value on\nstdin; with --raw, of the input bytes exactly as they are.")
	raw := fs.Bool("raw", false, "hash the input bytes as they are, not their canonical form")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("cid takes no arguments; it reads stdin")
	}
	var id canonical.ID
	if *raw {
		h := sha256.New()
		if _, err := io.Copy(h, s.in); err != nil {
			return usageError("reading stdin: %v", err)
		}
		h.Sum(id[:0])
	} else {
		data, err := io.ReadAll(io.LimitReader(s.in, maxLine+1))
		if err != nil {
			return usageError("reading stdin: %v", err)
		}
		if len(data) > maxLine {
			return usageError("input larger than 64 MiB")
		}
		v, err := canonical.Parse(data)
		if err != nil {
			return usageError("%v", err)
		}
		if id, err = canonical.ContentID(v); err != nil {
			return usageError("%v", err)
		}
	}
	_, err := fmt.Fprintln(s.out, id.String())
	return err
}
