package node

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/store"
)

// BackupOptions configure [Node.Backup] and [Node.Restore].
type BackupOptions struct {
	// Adopt takes a folder or prefix that was emptied, removed or
	// replaced, or that lost segments, as found (mirror.Options.Adopt).
	Adopt bool
	// Progress, if set, is called as segments are written or read.
	Progress func(mirror.Stats)
}

// Backup writes everything the node's store took in since its last backup
// there to the blob store at url (folder:PATH, s3://…; made where there is
// none) as the store's segments, each space's genesis beside them
// (docs/stores.md, Geneses). Resumable: a backup cut short goes on where
// it stopped. The files the store holds that versions held whole name
// are there when it returns, those that arrived after their versions
// were backed up included (docs/stores.md, Files). A blob store the node mirrors continuously (Options.Mirrors)
// is refused: its mirror keeps it in step already.
func (n *Node) Backup(ctx context.Context, url string, o *BackupOptions) (mirror.ExportResult, error) {
	m, err := n.oneMirror(ctx, url, true, o, nil)
	if err != nil {
		return mirror.ExportResult{}, err
	}
	defer m.Close()
	res, err := m.Export(ctx)
	if err != nil {
		return res, err
	}
	// Files that came after the versions naming them were backed up go
	// now; copies nothing names any more go after their grace.
	_, err = m.TidyFiles(ctx)
	return res, err
}

// Restore admits every version in the blob store's segments at url into
// the node's store through the node's judge, as from a peer, keeping each
// space's genesis there first (docs/stores.md, Geneses): what a backup of
// this account's node holds comes back, judged. Then the node keeps the
// spaces restored: with the account key, those the restored account
// registry lists (06 §1.3); without it, each space whose genesis came with
// the restore (the account's own spaces left to a node with its key). Resumable: segments read before are not read again.
func (n *Node) Restore(ctx context.Context, url string, o *BackupOptions) (mirror.ImportResult, error) {
	kept := &keptGeneses{Geneses: judge.MirrorGeneses(n.st)}
	m, err := n.oneMirror(ctx, url, false, o, kept)
	if err != nil {
		return mirror.ImportResult{}, err
	}
	defer m.Close()
	res, err := m.Import(ctx)
	if err != nil && !errors.Is(err, mirror.ErrBadSegment) {
		return res, err
	}
	if ferr := n.keepRestored(ctx, kept.ids()); ferr != nil {
		return res, errors.Join(err, ferr)
	}
	return res, err
}

// keepRestored makes the spaces a restore brought the node's again.
func (n *Node) keepRestored(ctx context.Context, ids []string) error {
	if n.account != nil {
		return n.followRegistry(ctx)
	}
	for _, id := range ids {
		g, ok, err := judge.GenesisOf(ctx, n.st, id)
		if err != nil || !ok {
			return err
		}
		if g.Account {
			continue // the account's registry and carry spaces: its key's to keep
		}
		if err := n.keep(ctx, g); err != nil {
			return fmt.Errorf("minca/node: keeping the restored space %s: %w", id, err)
		}
	}
	return nil
}

// oneMirror opens the blob store at url for a backup (create) or a
// restore, and a mirror of the node's store to it.
func (n *Node) oneMirror(ctx context.Context, url string, create bool, o *BackupOptions, g mirror.Geneses) (*mirror.Mirror, error) {
	if o == nil {
		o = &BackupOptions{}
	}
	so := n.storeOptions(nil)
	so.Create, so.Adopt = create, o.Adopt
	b, err := store.OpenBlobsFor(ctx, n.st, url, so)
	if err != nil {
		return nil, err
	}
	if id, ok := b.(engine.BlobStoreID); ok {
		for _, m := range n.mirrors {
			if m.StoreID() == id.StoreID() {
				return nil, engine.Errorf(store.ErrBadURL, "%s is a blob store the node mirrors continuously (serve --mirror): its mirror keeps it in step", store.ShortURL(url))
			}
		}
	}
	if g == nil {
		g = judge.MirrorGeneses(n.st)
	}
	m, err := mirror.New(n.st, b, &mirror.Options{Logger: n.o.Logger, Adopt: o.Adopt, Geneses: g, Progress: o.Progress})
	if err != nil {
		return nil, fmt.Errorf("minca/node: %s: %w", store.ShortURL(url), err)
	}
	return m, nil
}

// keptGeneses records the spaces whose genesis a restore kept.
type keptGeneses struct {
	mirror.Geneses
	mu   sync.Mutex
	kept []string
}

func (k *keptGeneses) KeepGenesis(ctx context.Context, space string, data []byte) error {
	if err := k.Geneses.KeepGenesis(ctx, space, data); err != nil {
		return err
	}
	k.mu.Lock()
	k.kept = append(k.kept, space)
	k.mu.Unlock()
	return nil
}

func (k *keptGeneses) ids() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.kept...)
}
