package main

import (
	"context"
	"encoding/json"

	"github.com/minca-go/minca/engine"
)

func runCompact(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "compact", "compact --store URL --blobs BLOBURL\n\nRewrites this store's own segments in the blob store into as few as\npossible, superseded bodies as stubs (02 §4.5, §4.9), then deletes the old\nones (only this writer's, only once the new one is durable). Prints what it\nrewrote and freed as JSON. BLOBURL: "+blobURLHelp)
	url := storeFlag(fs)
	blobs := fs.String("blobs", "", "the blob store")
	grace := fs.Duration("grace", 0, "keep the replaced segments this long for readers that listed them; a later compact or mirror deletes them")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("compact takes no arguments")
	}
	log := s.logger()
	b, err := openBlobs(ctx, *blobs, false, log)
	if err != nil {
		return err
	}
	st, err := openStore(*url, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	m, err := engine.NewMirror(st, b, &engine.MirrorOptions{Logger: log, DeleteGrace: *grace, CompactAt: -1})
	if err != nil {
		return err
	}
	defer m.Close()
	res, err := m.Compact(ctx)
	_ = json.NewEncoder(s.out).Encode(res)
	if err != nil {
		return failed(err)
	}
	return nil
}
