package main

import (
	"context"

	"github.com/minca-go/minca/engine/mirror"
)

func runBackup(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "backup", "backup --store URL --to BLOBURL\n\nWrites every version the store took in since the last backup to the blob\nstore as this store's segments (stubs as stubs). Resumable: run it again\nafter an interruption. Progress on stderr; a JSON summary on stdout.\nBLOBURL: "+blobURLHelp)
	url := storeFlag(fs)
	to := fs.String("to", "", "the blob store")
	adopt := fs.Bool("adopt", false, adoptHelp)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("backup takes no arguments")
	}
	log := s.logger()
	m, done, err := openMirror(ctx, log, *url, *to, true, nil, mirror.Options{Adopt: *adopt, Progress: everySecond(func(ms mirror.Stats) {
		log.Info("backup", "segments", ms.SegmentsWritten, "versions", ms.Exported, "bytes", ms.BytesWritten)
	})})
	if err != nil {
		return err
	}
	defer done()
	res, err := m.Export(ctx)
	if err == nil {
		log.Info("backup done", "segments", len(res.Segments), "versions", res.Versions, "bytes", res.Bytes)
	}
	return report(s, res, err)
}
