package main

import (
	"context"
	"time"

	"github.com/minca-go/minca/engine/mirror"
)

// adoptHelp is the --adopt flag's help, on every verb that mirrors.
const adoptHelp = "take the blob store as found when it is not the one this store mirrored to there before (a folder emptied or set up again) or lost segments; without it such a store is refused"

func runMirror(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "mirror", "mirror --store URL --to BLOBURL [--once]\n\nCouples a store to a blob store both ways: exports new versions as this\nstore's segments, imports other writers' segments through the judge, and\ncompacts this writer's segments. Runs until interrupted, or one round with\n--once; prints what it did as JSON on stdout. BLOBURL: "+blobURLHelp)
	url := storeFlag(fs)
	to := fs.String("to", "", "the blob store")
	once := fs.Bool("once", false, "one round (import, export, compact if due), then exit")
	salvage := fs.Bool("salvage", false, "also read conflict copies a sync service made of segments, when their content checks out")
	compactAt := fs.Int("compact-at", 16, "compact when this writer has this many segments (negative: never)")
	every := fs.Duration("every", 30*time.Second, "full rescan interval when running")
	grace := fs.Duration("grace", 10*time.Minute, "keep compacted-away segments this long for other devices still reading them")
	goneGrace := fs.Duration("gone-grace", time.Hour, "when running, wait this long for a blob store that is gone (a folder unmounted) before exiting")
	adopt := fs.Bool("adopt", false, adoptHelp)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("mirror takes no arguments")
	}
	log := s.logger()
	m, done, err := openMirror(ctx, log, *url, *to, true, defaultJudge(), mirror.Options{CompactAt: *compactAt, Salvage: *salvage, ImportEvery: *every, DeleteGrace: *grace, GoneGrace: *goneGrace, Adopt: *adopt})
	if err != nil {
		return err
	}
	defer done()
	w, err := m.Writer(ctx)
	if err != nil {
		return failed(err)
	}
	log.Info("mirror", "store", *url, "to", *to, "writer", w)
	if *once {
		err = m.Round(ctx)
	} else {
		err = m.Run(ctx)
	}
	out := struct {
		Writer string `json:"writer"`
		mirror.Stats
	}{w, m.Stats()}
	return report(s, out, err)
}
