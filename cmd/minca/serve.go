package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/api"
)

// exitTryAgain: unreachable, try again (the CLI contract's exit 4).
const exitTryAgain = 4

// listFlags is a flag given any number of times.
type listFlags []string

func (l *listFlags) String() string     { return strings.Join(*l, ",") }
func (l *listFlags) Set(v string) error { *l = append(*l, v); return nil }

// nodeOptions are the node's options from the command line: the store
// URLs this command opens (storeurl.go, bloburl.go) and a logger on stderr.
func nodeOptions(s *stdio, dir, store string, mirrors []string) *node.Options {
	return &node.Options{
		Dir: dir, Store: store, Mirrors: mirrors, Logger: s.logger(),
		OpenStore: func(ctx context.Context, url string, judge engine.Judge) (*engine.Store, error) {
			return openStore(url, judge)
		},
		OpenBlobs: func(ctx context.Context, url string) (engine.Blobs, error) {
			return openBlobs(ctx, url, true, s.logger())
		},
	}
}

func runServe(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "serve", "serve [--dir DIR] [--store URL] [--mirror BLOBURL]… [--listen ADDR]\n\nRuns the node: its store (an embedded Pebble store in DIR by default), the\nmirrors to folders or S3 continuously, and the local API (docs/api.md) on\nADDR (127.0.0.1:7465 by default, or unix:PATH), with the bearer token in\nDIR/api.token. Prints {\"url\",\"account\",\"dir\"} once it listens. SIGINT or\nSIGTERM drain the writes under way and close everything.")
	dir := fs.String("dir", "", "the node directory (default: minca in the user's config directory, or $MINCA_DIR)")
	store := fs.String("store", "", "the store URL (default: pebble:DIR/store): "+storeURLHelp)
	listen := fs.String("listen", api.DefaultListen, "where the API listens: HOST:PORT on the loopback interface, or unix:PATH")
	var mirrors listFlags
	fs.Var(&mirrors, "mirror", "a blob store to mirror continuously: "+blobURLHelp+" (repeatable)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("serve takes no arguments")
	}
	n, err := node.Open(ctx, nodeOptions(s, *dir, *store, mirrors))
	if err != nil {
		if errors.Is(err, node.ErrLocked) {
			return &exitError{code: exitFailed, err: err}
		}
		return failed(err)
	}
	defer n.Close()
	srv, err := api.New(n, &api.Options{Logger: s.logger()})
	if err != nil {
		return failed(err)
	}
	ln, url, err := api.Listen(*listen)
	if err != nil {
		return usageError("%v", err)
	}
	b, _ := json.Marshal(map[string]any{"url": url, "account": n.Account(), "dir": n.Dir()})
	fmt.Fprintf(s.out, "%s\n", b)
	s.logger().Info("serving", "url", url, "dir", n.Dir())
	if err := srv.Serve(ctx, ln, url); err != nil {
		return failed(err)
	}
	if err := n.Close(); err != nil {
		return failed(err)
	}
	return nil
}

func runInit(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "init", "init [--dir DIR] [--account-key FILE]\n\nMakes a node directory: a new account key in it (unless --account-key names\none, or DIR/account.key exists), the session key and its note, the account\nregistry, and the API token. Prints {\"dir\",\"account\",\"session\"}.")
	dir := fs.String("dir", "", "the node directory (default: minca in the user's config directory, or $MINCA_DIR)")
	keyFile := fs.String("account-key", "", "an existing account key file to use instead of a new one")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	o := nodeOptions(s, *dir, "", nil)
	o.AccountKey = *keyFile
	d, err := initDir(o)
	if err != nil {
		return failed(err)
	}
	o.Dir = d
	n, err := node.Open(ctx, o)
	if err != nil {
		return failed(err)
	}
	defer n.Close()
	sess, _, err := n.Session()
	if err != nil {
		return failed(err)
	}
	if _, err := api.Token(n.Dir()); err != nil {
		return failed(err)
	}
	return writeLine(s, map[string]any{"dir": n.Dir(), "account": n.Account(), "session": sess})
}

func writeLine(s *stdio, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.out, "%s\n", b)
	return err
}
