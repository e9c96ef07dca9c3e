package node

import (
	"context"
	"fmt"
	"strings"

	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/engine"
)

// openStoreURL is the default Options.OpenStore: the local stores a node
// runs on (DESIGN.md: a store is named by a URL). A store whose durable
// copy is a blob store (folder:, s3://) is opened through Options.OpenStore
// by the caller that knows where its index lives.
func openStoreURL(ctx context.Context, url string, judge engine.Judge) (*engine.Store, error) {
	scheme, path, ok := strings.Cut(url, ":")
	if !ok {
		scheme, path = "pebble", url
	}
	var kv engine.KV
	var err error
	switch scheme {
	case "pebble":
		kv, err = pebble.Open(path, nil)
	case "sqlite":
		kv, err = sqlite.Open(path, nil)
	case "memory":
		kv = memory.Open(nil)
	default:
		return nil, fmt.Errorf("minca/node: store %s: the node opens pebble:, sqlite: and memory: stores itself; give Options.OpenStore for others", url)
	}
	if err != nil {
		return nil, fmt.Errorf("minca/node: store %s: %w", url, err)
	}
	st, err := engine.Open(kv, &engine.Options{Judge: judge})
	if err != nil {
		kv.Close()
		return nil, fmt.Errorf("minca/node: store %s: %w", url, err)
	}
	return st, nil
}

// openBlobsURL is the default Options.OpenBlobs: a data folder, made when
// it holds nothing yet. An S3 prefix is opened through Options.OpenBlobs
// (cmd/minca gives one): backends/s3's tests judge with this package.
func openBlobsURL(ctx context.Context, url string) (engine.Blobs, error) {
	if path, ok := strings.CutPrefix(url, "folder:"); ok {
		b, err := folder.Open(path, &folder.Options{Create: true})
		if err != nil {
			return nil, fmt.Errorf("minca/node: mirror %s: %w", url, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("minca/node: mirror %s: the node opens folder:PATH mirrors itself; give Options.OpenBlobs for others", url)
}
