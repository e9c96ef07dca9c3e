package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/store"
)

// storeURL is the store the node opens: o.Store made absolute, recorded
// in the node directory when it changes; or, when o.Store is empty, the
// one recorded there, else the default pebble:Dir/store. The node runs on
// a local store: a folder or a bucket is one of its mirrors.
func storeURL(o Options) (string, error) {
	rec := filepath.Join(o.Dir, storeURLName)
	u := o.Store
	if u == "" {
		b, err := os.ReadFile(rec)
		switch {
		case err == nil:
			u = strings.TrimSpace(string(b))
		case errors.Is(err, os.ErrNotExist):
			u = "pebble:" + filepath.Join(o.Dir, "store")
		default:
			return "", fmt.Errorf("minca/node: the node's store: %w", err)
		}
	}
	if store.IsBlobURL(u) {
		return "", engine.Errorf(store.ErrBadURL, "minca/node: store %s: a node runs on a local store (pebble:, sqlite:, memory:); a folder or a bucket is one of its mirrors", store.ShortURL(u))
	}
	abs, err := store.Abs(u)
	if err != nil {
		return "", err
	}
	if b, err := os.ReadFile(rec); err != nil || strings.TrimSpace(string(b)) != abs {
		if err := writeFileAtomic(rec, []byte(abs+"\n"), 0o600); err != nil {
			return "", fmt.Errorf("minca/node: recording the node's store: %w", err)
		}
	}
	return abs, nil
}

// DefaultBlockCache and DefaultMemTable are a node's Pebble memory where
// Options.StoreOptions.Memory leaves it zero: `store import`'s, not the
// backend's 32 MiB cache and 16 MiB memtables (docs/stores.md, Memory of
// a node). A node runs beside the user's other programs for as long as the
// machine is up; what it reads most (a record's head, an id's vseq) is
// small, and its files are outside Pebble altogether.
const (
	DefaultBlockCache = 12 << 20
	DefaultMemTable   = 7 << 20
)

// storeOptions are the store.Options the node opens its store and its
// mirrors' blob stores with: the caller's, with the node's judge and
// memory, made where missing.
func (n *Node) storeOptions(indexer engine.Indexer) *store.Options {
	var so store.Options
	if n.o.StoreOptions != nil {
		so = *n.o.StoreOptions
	}
	if so.Memory.BlockCache == 0 {
		so.Memory.BlockCache = DefaultBlockCache
	}
	if so.Memory.MemTable == 0 {
		so.Memory.MemTable = DefaultMemTable
	}
	so.Judge, so.Indexer, so.Create, so.ReadOnly = n.pj, indexer, true, false
	if so.Logger == nil {
		so.Logger = n.o.Logger
	}
	so.Waiting = store.PeersBounded(so.Waiting)
	return &so
}

// startMirrors opens each mirror's blob store for the node's store
// (store.OpenBlobsFor: a folder emptied since is refused unless Adopt) and
// runs its mirror in both directions until the node closes.
func (n *Node) startMirrors(ctx context.Context) error {
	so := n.storeOptions(nil)
	for _, u := range n.o.Mirrors {
		b, err := store.OpenBlobsFor(ctx, n.st, u, so)
		if err != nil {
			return err
		}
		m, err := mirror.New(n.st, b, &mirror.Options{Logger: n.o.Logger, Adopt: so.Adopt, Geneses: judge.MirrorGeneses(n.st)})
		if err != nil {
			return fmt.Errorf("minca/node: mirror %s: %w", store.ShortURL(u), err)
		}
		n.mirrors = append(n.mirrors, m)
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			if err := m.Run(n.ctx); err != nil && n.ctx.Err() == nil {
				n.o.Logger.Error("mirror stopped", "mirror", store.ShortURL(u), "err", err)
			}
		}()
	}
	return nil
}
