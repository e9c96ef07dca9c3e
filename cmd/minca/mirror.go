package main

import (
	"context"
	"time"

	"github.com/minca-go/minca/engine/mirror"
)

func runMirror(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "mirror", "mirror --store URL --to BLOBURL [--once]\n\nCouples a store to a blob store both ways: exports new versions as this\nstore's segments, imports other writers' segments through the judge, and\ncompacts this writer's segments. Runs until interrupted, or one round with\n--once; prints what it did as JSON on stdout. BLOBURL: "+blobURLHelp)
	sp := storeFlags(fs, true)
	to := fs.String("to", "", "the blob store `BLOBURL`")
	once := fs.Bool("once", false, "one round (import, export, compact if due), then exit")
	salvage := fs.Bool("salvage", false, "also read conflict copies a sync service made of segments, when their content checks out")
	compactAt := fs.Int("compact-at", 16, "compact when this writer has `N` segments (negative: never)")
	every := fs.Duration("every", 30*time.Second, "full rescan interval when running, a `DURATION`")
	grace := fs.Duration("grace", 10*time.Minute, "keep compacted-away segments this `DURATION` for other devices still reading them")
	goneGrace := fs.Duration("gone-grace", time.Hour, "when running, wait this `DURATION` for a blob store that is gone (a folder unmounted) before exiting")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("mirror takes no arguments")
	}
	log := s.logger()
	meter := newMeter(s, log, "mirror")
	defer meter.Done()
	m, st, err := openMirror(ctx, log, sp, createStore, *to, true, mirror.Options{CompactAt: *compactAt, Salvage: *salvage, ImportEvery: *every, DeleteGrace: *grace, GoneGrace: *goneGrace,
		Progress: everySecond(func(ms mirror.Stats) { meter.Update(mirrorStatus(ms)) })})
	if err != nil {
		return err
	}
	defer st.Close()
	defer m.Close()
	w, err := m.Writer(ctx)
	if err != nil {
		return blobFailed(*to, err)
	}
	log.Info("mirror", "store", sp.url, "to", *to, "writer", w)
	if *once {
		err = m.Round(ctx)
	} else {
		err = m.Run(ctx)
	}
	meter.Done()
	// A folder: or s3:// store's own blob store gets what the mirror took
	// in. Stopped by a signal, the store keeps it in its index for the next
	// verb that writes.
	if err == nil && ctx.Err() == nil {
		err = st.Flush(ctx)
	} else if err == nil && st.Blobs() != nil {
		log.Warn("stopped before flushing to the store's own blob store; the next verb that writes to the store exports it", "store", sp.url)
	}
	out := struct {
		Writer string `json:"writer"`
		mirror.Stats
	}{w, m.Stats()}
	return report(s, *to, emptyLists(out), err)
}
