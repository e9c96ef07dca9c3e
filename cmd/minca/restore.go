package main

import (
	"context"

	"github.com/minca-go/minca/engine/mirror"
)

func runRestore(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "restore", "restore --from BLOBURL [--dir DIR]\n       minca restore --from BLOBURL --store URL\n\nAdmits every version of every writer's segments in the blob store into the\nnode's store (or, with --store, the store URL, made where there is none),\nthrough the judge, as from a peer, each space's genesis there kept first\n(docs/stores.md, Geneses). Through the node, which then keeps the spaces\nrestored: with the account key, those its restored account registry lists;\nwithout, each space whose genesis came. Resumable: segments already read\nare not read again. Progress on stderr; a JSON summary on stdout.\nBLOBURL: "+blobURLHelp)
	dir := dirFlag(fs)
	from := fs.String("from", "", "the blob store `BLOBURL`")
	sp := storeFlags(fs, true)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("restore takes no arguments")
	}
	if *from == "" {
		return usageError("--from BLOBURL is required (%s)", blobURLHelp)
	}
	viaNode, err := throughNode(fs, sp, *dir)
	if err != nil {
		return err
	}
	if viaNode {
		return blobsThroughNode(ctx, s, *dir, "/v1/restore", "from", *from, sp)
	}
	log := s.logger()
	meter := newMeter(s, log, "restore")
	defer meter.Done()
	m, st, err := openMirror(ctx, log, sp, createStore, *from, false, mirror.Options{Progress: everySecond(func(ms mirror.Stats) {
		meter.Update(segmentsRead(ms))
	})})
	if err != nil {
		return err
	}
	defer st.Close()
	defer m.Close()
	res, err := m.Import(ctx)
	meter.Done()
	if err == nil {
		err = st.Flush(ctx) // a folder: or s3:// store's own blob store
	}
	if err == nil && res.Unavailable > 0 {
		log.Warn("some segments could not be read yet (placeholders or partial files); run restore again", "count", res.Unavailable)
	}
	return report(s, *from, emptyLists(res), err)
}
