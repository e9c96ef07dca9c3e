package node

import (
	"context"
	"errors"
	"time"

	"github.com/minca-go/minca/engine"
)

// TidyFiles deletes the files the store holds that no version held whole
// names and that were kept more than Options.FileGrace ago, and what a
// crash or a fetch given up left behind as old (docs/stores.md, Files;
// engine.Store.TidyFiles). A running node does it every
// Options.TidyFilesEvery.
func (n *Node) TidyFiles(ctx context.Context) (engine.TidyFilesResult, error) {
	return n.st.TidyFiles(ctx, n.o.FileGrace)
}

// tidyFilesLoop runs TidyFiles every TidyFilesEvery while the node runs.
func (n *Node) tidyFilesLoop() {
	defer n.wg.Done()
	t := time.NewTicker(n.o.TidyFilesEvery)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
			res, err := n.TidyFiles(n.ctx)
			switch {
			case err != nil && !errors.Is(err, engine.ErrReadOnly) && n.ctx.Err() == nil:
				n.o.Logger.Error("tidying the store's files", "err", err)
			case res.Deleted > 0 || res.Removed > 0:
				n.o.Logger.Info("store files tidied", "deleted", res.Deleted, "bytes", res.DeletedBytes, "removed", res.Removed)
			}
		}
	}
}
