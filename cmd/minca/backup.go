package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/minca-go/minca/engine"
)

func runBackup(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "backup", "backup --store URL --to BLOBURL\n\nWrites every version the store took in since the last backup to the blob\nstore as this store's segments (stubs as stubs). Resumable: run it again\nafter an interruption. Progress on stderr; a JSON summary on stdout.\nBLOBURL: "+blobURLHelp)
	url := storeFlag(fs)
	to := fs.String("to", "", "the blob store")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("backup takes no arguments")
	}
	log := s.logger()
	b, err := openBlobs(ctx, *to, true, log)
	if err != nil {
		return err
	}
	st, err := openStore(*url, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	var last time.Time
	m, err := engine.NewMirror(st, b, &engine.MirrorOptions{Logger: log, Progress: func(ms engine.MirrorStats) {
		if time.Since(last) > time.Second {
			last = time.Now()
			log.Info("backup", "segments", ms.SegmentsWritten, "versions", ms.Exported, "bytes", ms.BytesWritten)
		}
	}})
	if err != nil {
		return err
	}
	defer m.Close()
	res, err := m.Export(ctx)
	_ = json.NewEncoder(s.out).Encode(res)
	if err != nil {
		return failed(err)
	}
	log.Info("backup done", "segments", len(res.Segments), "versions", res.Versions, "bytes", res.Bytes)
	return nil
}
