package main

import (
	"context"
	"fmt"

	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/internal/progress"
)

func runBackup(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "backup", "backup --store URL --to BLOBURL\n\nWrites every version the store took in since the last backup to the blob\nstore as this store's segments (stubs as stubs). Resumable: run it again\nafter an interruption. Progress on stderr; a JSON summary on stdout.\nBLOBURL: "+blobURLHelp)
	sp := storeFlags(fs, true)
	to := fs.String("to", "", "the blob store `BLOBURL`")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("backup takes no arguments")
	}
	log := s.logger()
	meter := newMeter(s, log, "backup")
	defer meter.Done()
	m, st, err := openMirror(ctx, log, sp, useStore, *to, true, mirror.Options{Progress: everySecond(func(ms mirror.Stats) {
		meter.Update(progress.Status{Text: fmt.Sprintf("%s versions in %s segments, %s", progress.Count(ms.Exported), progress.Count(ms.SegmentsWritten), bytesText(ms.BytesWritten))})
	})})
	if err != nil {
		return err
	}
	defer st.Close()
	defer m.Close()
	res, err := m.Export(ctx)
	meter.Done()
	if err == nil {
		log.Info("backup done", "segments", len(res.Segments), "versions", res.Versions, "bytes", res.Bytes)
	}
	return report(s, *to, emptyLists(res), err)
}
