package main

import (
	"context"

	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/api"
)

func runServe(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "serve", "serve [--dir DIR] [--store URL] [--mirror BLOBURL]… [--listen ADDR]\n      [--peer-listen ADDR [--tls-cert FILE --tls-key FILE] [--serve-relay]]\n      [--peer URL]… [--relay URL]… [--hold SPACE=COLL,…]…\n      [--waiting-bytes BYTES] [--waiting-bytes-per-peer BYTES] [--waiting-age DURATION]\n\nRuns the node: its store, the mirrors to folders or S3 continuously, the\nlocal API (docs/api.md) on ADDR (127.0.0.1:7465 by default, or unix:PATH),\nwith the bearer token in DIR/api.token, and sync sessions with its peers\n(docs/sync.md §7–§8) for every space it holds: those it dials (--peer),\nthose that dial it (--peer-listen), and those it meets at relays (--relay).\nThe node directory remembers the store it runs on (an embedded Pebble store\nin DIR unless --store named another once); $MINCA_STORE is not used here.\nPrints {\"url\",\"account\",\"dir\",\"peers\"?} once it listens (peers: where\npeers reach it). SIGINT or SIGTERM drain the writes under way, export what\nthe mirrors have not, close everything and exit 130 or 143.")
	dir := dirFlag(fs)
	sp := storeFlags(fs, true)
	// The node's store is its directory's: $MINCA_STORE names the store
	// verbs' store, and a node opened later on the directory (a verb run
	// while none serves) must find the same one.
	sp.url = ""
	st := fs.Lookup("store")
	st.DefValue, st.Usage = "", "the store `URL` the node runs on, a local one (default: the one DIR records, else pebble:DIR/store): pebble:PATH, sqlite:FILE, memory:"
	listen := fs.String("listen", api.DefaultListen, "where the API listens: `ADDR` HOST:PORT on the loopback interface, or unix:PATH")
	var mirrors listFlag
	fs.Var(&mirrors, "mirror", "a blob store to mirror continuously, `BLOBURL` "+blobURLHelp+" (repeatable)")
	ps := peerFlags(fs)
	waiting := waitingFlags(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("serve takes no arguments")
	}
	ln, url, err := api.Listen(*listen)
	if err != nil {
		return usageError("--listen: %v", err)
	}
	n, err := node.Open(ctx, withWaiting(nodeOptions(s, *dir, sp, mirrors), waiting))
	if err != nil {
		ln.Close()
		return usageIfBadURL(err)
	}
	defer n.Close()
	p, peerURL, stopPeers, err := startPeers(ctx, s, n, ps)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopPeers()
	srv, err := api.New(n, &api.Options{Logger: s.logger(), Peers: p})
	if err != nil {
		ln.Close()
		return err
	}
	out := map[string]any{"url": url, "account": n.Account(), "dir": n.Dir()}
	if peerURL != "" {
		out["peers"] = peerURL
	}
	if err := writeJSON(s, out); err != nil {
		ln.Close()
		return err
	}
	s.logger().Info("serving", "url", url, "dir", n.Dir())
	if err := srv.Serve(ctx, ln, url); err != nil {
		return err
	}
	stopPeers()
	return n.Close()
}

func runInit(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "init", "init [--dir DIR] [--account-key FILE]\n\nMakes a node directory: a new account key in it (unless --account-key names\none, or DIR/account.key exists), the session key and its note, the account\nregistry, and the API token. Prints {\"dir\",\"account\",\"session\"}. Running\nit again changes nothing but a session note due for renewal.")
	dir := dirFlag(fs)
	keyFile := fs.String("account-key", "", "an existing account key `FILE` to use instead of a new one")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("init takes no arguments")
	}
	o := nodeOptions(s, *dir, nil, nil)
	o.AccountKey = *keyFile
	d, err := initDir(o)
	if err != nil {
		return err
	}
	o.Dir = d
	n, err := node.Open(ctx, o)
	if err != nil {
		return err
	}
	defer n.Close()
	sess, _, err := n.Session()
	if err != nil {
		return err
	}
	if _, err := api.Token(n.Dir()); err != nil {
		return err
	}
	if err := writeJSON(s, map[string]any{"dir": n.Dir(), "account": n.Account(), "session": sess}); err != nil {
		return err
	}
	return n.Close()
}
