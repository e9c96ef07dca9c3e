package main

import (
	"context"

	"github.com/minca-go/minca/bench"
)

func runBenchSeal(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench seal", "bench seal [--body-bytes N] [--rounds N]\n\nSeals and opens one body of a private space (docs/private-spaces.md) and prints\nas JSON, medians of the rounds: the envelope's seal and open against a bare\nAES-256-GCM of the same bytes in the same run (goal ≤ 1.5×); the whole body\nto {sealed, keyId} and back against the same bound, and against it with\nbase64url; boxing a key to a member.")
	bodyBytes := fs.Int("body-bytes", 600, "the body's size as canonical JSON, `BYTES` (at least 44)")
	rounds := fs.Int("rounds", 5, "`N` rounds to take the medians of")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if *bodyBytes < 44 || *rounds < 1 {
		return usageError("--body-bytes is at least 44 and --rounds at least 1")
	}
	r, err := bench.RunSeal(ctx, bench.SealConfig{BodyBytes: *bodyBytes, Rounds: *rounds})
	if err != nil {
		return failed(err)
	}
	return writeJSON(s, r)
}

func runBenchPrivateImport(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench private-import", "bench private-import [--versions N] [--rounds N] [--dir DIR]\n\nImports N versions of a private space into a node's store (Pebble, the\nnode's judge and index) by a member that opens every body and by a node\nwithout the key, and N versions of a public space, in the same run; prints\nas JSON, medians of the rounds, each private import against the public one\n(goal ≥ 0.9×).")
	versions := fs.Int("versions", 100_000, "`N` versions in each import")
	rounds := fs.Int("rounds", 3, "`N` rounds to take the medians of")
	dir := fs.String("dir", "", "the `DIR`ectory the stores go in (default a temporary directory)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if *versions < 1 || *rounds < 1 {
		return usageError("--versions and --rounds are at least 1")
	}
	r, err := bench.RunPrivateImport(ctx, bench.PrivateImportConfig{Versions: *versions, Rounds: *rounds, Dir: *dir})
	if err != nil {
		return failed(err)
	}
	return writeJSON(s, r)
}
