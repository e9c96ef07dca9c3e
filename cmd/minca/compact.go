package main

import (
	"context"

	"github.com/minca-go/minca/engine/mirror"
)

func runCompact(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "compact", "compact --store URL --blobs BLOBURL\n\nRewrites this store's own segments in the blob store into as few as\npossible, superseded bodies as stubs (02 §4.5, §4.9), then deletes the old\nones (only this writer's, only once the new one is durable). Prints what it\nrewrote and freed as JSON. BLOBURL: "+blobURLHelp)
	url := storeFlag(fs)
	blobs := fs.String("blobs", "", "the blob store")
	adopt := fs.Bool("adopt", false, adoptHelp)
	grace := fs.Duration("grace", 0, "keep the replaced segments this long for readers that listed them; a later compact or mirror deletes them")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("compact takes no arguments")
	}
	m, done, err := openMirror(ctx, s.logger(), *url, *blobs, false, nil, mirror.Options{DeleteGrace: *grace, CompactAt: -1, Adopt: *adopt})
	if err != nil {
		return err
	}
	defer done()
	res, err := m.Compact(ctx)
	return report(s, res, err)
}
