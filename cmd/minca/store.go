package main

import (
	"context"
	"fmt"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/judge"
)

// storeSubverbs are `minca store SUBVERB`, one file each (store_*.go).
func storeSubverbs() []verb {
	return []verb{
		{"import", "admit versions (JSON lines) through the judge; one outcome line each", runStoreImport},
		{"get", "print a record's readable current version (exit 3 when not held)", runStoreGet},
		{"history", "list every held version of a record, newest first (02 §4.3)", runStoreHistory},
		{"export", "print everything held, as it travels (stubs as stubs), in sync order", runStoreExport},
		{"stats", "print what the store holds, as JSON", runStoreStats},
		{"check", "re-verify every version and every index (exit 1 with the problems)", runStoreCheck},
	}
}

// runStore dispatches `minca store SUBVERB`.
func runStore(ctx context.Context, s *stdio, args []string) error {
	return runSubverb(ctx, s, "store", storeSubverbs(), args)
}

// defaultJudge is the judge of versions alone and their chains, with
// identity's note checker: every root may write. Mirrors, backups and
// restores admit with it, and a folder: or s3:// store's index; store
// import and check take --judge.
func defaultJudge() engine.Judge { return &judge.Judge{Notes: noteChecker()} }

// judgeFlag adds --judge to a verb that admits or re-judges versions:
// "full" (the default), the space's access history (docs/spaces.md), or
// "roots", versions alone and their chains (every root may write).
func judgeFlag(fs *flags, sp *storeSpec) {
	sp.judge = "full"
	fs.Func("judge", "the `JUDGE`: \"full\" (default), the space's access history (docs/spaces.md), or \"roots\", versions alone and their chains (every root may write)", func(v string) error {
		if v != "full" && v != "roots" {
			return fmt.Errorf("%q: want full or roots", v)
		}
		sp.judge = v
		return nil
	})
}
