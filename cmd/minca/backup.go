package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/internal/progress"
)

func runBackup(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "backup", "backup --to BLOBURL [--dir DIR]\n       minca backup --store URL --to BLOBURL\n\nWrites every version the node's store (or, with --store, the store URL)\ntook in since the last backup to the blob store as this store's segments\n(stubs as stubs), each space's genesis beside them, so a restore judges\nwhat it restores (docs/stores.md, Geneses). Through the node running in\nDIR when there is one. Resumable: run it again after an interruption.\nProgress on stderr; a JSON summary on stdout {\"segments\",\"versions\",\"bytes\"}.\nBLOBURL: "+blobURLHelp)
	dir := dirFlag(fs)
	sp := storeFlags(fs, true)
	to := fs.String("to", "", "the blob store `BLOBURL`")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("backup takes no arguments")
	}
	if *to == "" {
		return usageError("--to BLOBURL is required (%s)", blobURLHelp)
	}
	viaNode, err := throughNode(fs, sp, *dir)
	if err != nil {
		return err
	}
	if viaNode {
		return blobsThroughNode(ctx, s, *dir, "/v1/backup", "to", *to, sp)
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
	if err == nil {
		_, err = m.TidyFiles(ctx) // files that arrived after their versions were backed up
	}
	meter.Done()
	if err == nil {
		log.Info("backup done", "segments", len(res.Segments), "versions", res.Versions, "bytes", res.Bytes)
	}
	return report(s, *to, emptyLists(res), err)
}

// blobsThroughNode runs a backup or a restore through the node in dir
// (POST path {member: blobURL, adopt}), and prints its summary. The S3
// flags travel in the URL (timeout=, connect-timeout=), since the node
// opens the blob store.
func blobsThroughNode(ctx context.Context, s *stdio, dir, path, member, blobURL string, sp *storeSpec) error {
	if sp.s3.timeout != 0 || sp.s3.connectTimeout != 0 {
		if !strings.HasPrefix(blobURL, "s3://") {
			return usageError("--timeout and --connect-timeout are for s3:// blob stores")
		}
		u, err := url.Parse(blobURL)
		if err != nil {
			return usageError("%s: %v", member, err)
		}
		q := u.Query()
		if sp.s3.timeout != 0 {
			q.Set("timeout", sp.s3.timeout.String())
		}
		if sp.s3.connectTimeout != 0 {
			q.Set("connect-timeout", sp.s3.connectTimeout.String())
		}
		u.RawQuery = q.Encode()
		blobURL = u.String()
	}
	out, err := call(ctx, s, dir, http.MethodPost, path, map[string]any{member: blobURL, "adopt": sp.adopt})
	if err != nil {
		return err
	}
	return printRaw(s, out)
}
