package main

import (
	"context"

	"github.com/minca-go/minca/bench"
)

func runBenchMirror(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench mirror", "bench mirror [--versions N] [--segments N] [--rounds N] [--dir DIR] [--s3 URL]\n\nBacks a store of N versions up to a folder, restores it, and lists a folder of\nmany segments; with --s3, also backs up to and restores from that S3 store\n(an empty prefix, e.g. on a MinIO on loopback; credentials from the\nenvironment), counting requests. Prints the figures as JSON.")
	var cfg bench.MirrorConfig
	fs.IntVar(&cfg.Versions, "versions", 100_000, "`N` versions in the store backed up")
	fs.IntVar(&cfg.Segments, "segments", 10_000, "`N` segments in the listed folder")
	fs.IntVar(&cfg.Rounds, "rounds", 3, "`N` rounds to take the medians of")
	fs.StringVar(&cfg.Dir, "dir", "", "working `DIR` (default: a temporary one, removed)")
	fs.StringVar(&cfg.S3, "s3", "", "an S3 store `URL` with an empty prefix to measure requests against (default: none, the S3 figures left out)")
	s3f := addS3Flags(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	cfg.S3Options = s3f.options()
	cfg.S3Options.Logger = s.logger()
	p, done := benchProgress(s, "bench mirror")
	cfg.Progress = p
	r, err := bench.RunMirror(ctx, cfg)
	done()
	if err != nil {
		return failed(err)
	}
	return writeJSON(s, r)
}
