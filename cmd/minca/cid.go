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
	fs := newFlags(s, "cid", "cid [--raw] [FILE]\n\nPrints the content id (02 §2) of the canonical form of the JSON value in FILE\nor on stdin; with --raw, of the input bytes exactly as they are. Exit 2 when\nthe input is not valid JSON.")
	raw := fs.Bool("raw", false, "hash the input bytes as they are, not their canonical form")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 1 {
		return usageError("cid takes at most one FILE")
	}
	var id canonical.ID
	if *raw {
		in, err := openInput(s, fs.Arg(0))
		if err != nil {
			return err
		}
		defer in.close()
		h := sha256.New()
		if _, err := io.Copy(h, in.r); err != nil {
			return usageError("reading %s: %v", in.label(), err)
		}
		h.Sum(id[:0])
	} else {
		data, err := readAll(s, fs.Arg(0))
		if err != nil {
			return err
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
