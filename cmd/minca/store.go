package main

import (
	"context"
	"flag"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/node"
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

// storeFlag adds --store to a subverb's flags.
func storeFlag(fs *flag.FlagSet) *string {
	return fs.String("store", "", "the store: "+storeURLHelp)
}

// defaultJudge is the judge of versions alone and their chains, with
// identity's note checker: every root may write. Mirrors, backups and
// restores admit with it; store import and check take --judge.
func defaultJudge() engine.Judge { return &node.Judge{Notes: noteChecker()} }

// judgeFlag adds --judge to a subverb's flags.
func judgeFlag(fs *flag.FlagSet) *string {
	return fs.String("judge", "full", `the judge: "full", the space's access history (docs/spaces.md), or "roots", versions alone and their chains (every root may write)`)
}

// openWithJudge opens a store with the judge --judge names.
func openWithJudge(url, which string) (*engine.Store, error) {
	switch which {
	case "full":
		st, _, err := openJudged(url)
		return st, err
	case "roots":
		return openStore(url, defaultJudge())
	}
	return nil, usageError("--judge %q: full or roots", which)
}
