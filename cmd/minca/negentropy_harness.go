package main

import (
	"context"
	"flag"
	"os"
	"strconv"

	"github.com/minca-go/minca/negentropy/harness"
)

// runNegentropyHarness speaks the reference negentropy test harness's line
// protocol on stdin and stdout, for interop runs against the reference
// implementations' scripts.
func runNegentropyHarness(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "negentropy-harness", "negentropy-harness [--frame-size-limit N] [--storage vector|tree]\n\nReads item,<ts>,<idhex> / seal / initiate / msg,<hex> lines on stdin; writes\nmsg / have / need / done lines on stdout, as the reference implementations'\ntest harness does.")
	limit := fs.Uint64("frame-size-limit", 0, "largest message in `BYTES`, 0 for none, at least 4096 (default: $FRAMESIZELIMIT)")
	storage := fs.String("storage", "vector", "`STORAGE`: vector or tree")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "frame-size-limit" })
	if env := os.Getenv("FRAMESIZELIMIT"); env != "" && !set {
		v, err := strconv.ParseUint(env, 10, 64)
		if err != nil {
			return usageError("FRAMESIZELIMIT %q: %v", env, err)
		}
		*limit = v
	}
	opts := harness.Options{FrameSizeLimit: *limit, Storage: harness.Storage(*storage)}
	if err := harness.Run(ctx, s.in, s.out, opts); err != nil {
		return failed(err)
	}
	return nil
}
