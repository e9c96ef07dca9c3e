package main

import (
	"context"
	"fmt"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/internal/progress"
)

// fileGrace is how long a file no version held whole names stays in a
// store, and a writer's copy of it in a blob store (docs/stores.md, Files).
const fileGrace = 10 * time.Minute

func runCompact(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "compact", "compact --store URL --blobs BLOBURL\n\nRewrites this store's own segments in the blob store into as few as\npossible, superseded bodies as stubs (02 §4.5, §4.9), then deletes the old\nones (only this writer's, only once the new one is durable). Files no version\nheld whole names go too after a 10-minute grace, from the store and, of this\nwriter's own, from the blob store (docs/stores.md, Files). Prints what it\nrewrote and freed as JSON. BLOBURL: "+blobURLHelp)
	sp := storeFlags(fs, true)
	blobs := fs.String("blobs", "", "the blob store `BLOBURL`")
	grace := fs.Duration("grace", 0, "keep the replaced segments this `DURATION` (e.g. 10m) for readers that listed them; a later compact or mirror deletes them")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("compact takes no arguments")
	}
	log := s.logger()
	meter := newMeter(s, log, "compact")
	defer meter.Done()
	m, st, err := openMirror(ctx, log, sp, useStore, *blobs, false, mirror.Options{DeleteGrace: *grace, CompactAt: -1,
		Progress: everySecond(func(ms mirror.Stats) {
			meter.Update(progress.Status{Text: fmt.Sprintf("%s segments written, %s", progress.Count(ms.SegmentsWritten), bytesText(ms.BytesWritten))})
		})})
	if err != nil {
		return err
	}
	defer st.Close()
	defer m.Close()
	res, err := m.Compact(ctx)
	if err == nil {
		// The store's own files too: those no version held whole names,
		// past the file grace (docs/stores.md, Files).
		var tr engine.TidyFilesResult
		if tr, err = st.Engine().TidyFiles(ctx, fileGrace); err == nil && (tr.Deleted > 0 || tr.Removed > 0) {
			log.Info("store files tidied", "deleted", tr.Deleted, "bytes", tr.DeletedBytes, "removed", tr.Removed)
		}
	}
	meter.Done()
	return report(s, *blobs, emptyLists(res), err)
}
