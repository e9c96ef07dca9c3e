package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/api"
)

func runServe(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "serve", "serve [--dir DIR] [--store URL] [--mirror BLOBURL]… [--listen ADDR]\n      [--peer-listen ADDR [--tls-cert FILE --tls-key FILE] [--serve-relay]]\n      [--peer URL]… [--relay URL]… [--hold SPACE=COLL,…]…\n      [--waiting-bytes BYTES] [--waiting-bytes-per-peer BYTES] [--waiting-age DURATION]\n      [--memory NAME=VALUE]… [--tidy-files-every DURATION]\n\nRuns the node: its store, the mirrors to folders or S3 continuously, the\nlocal API (docs/api.md) on ADDR (127.0.0.1:7465 by default, or unix:PATH),\nwith the bearer token in DIR/api.token, and sync sessions with its peers\n(docs/sync.md §7–§8) for every space it holds: those it dials (--peer),\nthose that dial it (--peer-listen), and those it meets at relays (--relay).\nThe node directory remembers the store it runs on (an embedded Pebble store\nin DIR unless --store named another once); $MINCA_STORE is not used here.\nPrints {\"url\",\"account\",\"dir\",\"peers\"?} once it listens (peers: where\npeers reach it). SIGINT or SIGTERM drain the writes under way, export what\nthe mirrors have not, close everything and exit 130 or 143.")
	dir := dirFlag(fs)
	sp := storeFlags(fs, true)
	// The node's store is its directory's: $MINCA_STORE names the store
	// verbs' store, and a node opened later on the directory (a verb run
	// while none serves) must find the same one.
	sp.url = ""
	st := fs.Lookup("store")
	st.DefValue, st.Usage = "", "the store `URL` the node runs on, a local one (default: the one DIR records, else pebble:DIR/store): pebble:PATH, sqlite:FILE, memory:"
	defListen := api.DefaultListen
	if l := os.Getenv("MINCA_LISTEN"); l != "" {
		defListen = l
	}
	listen := fs.String("listen", defListen, "where the API listens: `ADDR` HOST:PORT on the loopback interface, or unix:PATH (default $MINCA_LISTEN, else "+api.DefaultListen+")")
	var mirrors listFlag
	fs.Var(&mirrors, "mirror", "a blob store to mirror continuously, `BLOBURL` "+blobURLHelp+" (repeatable)")
	ps := peerFlags(fs)
	lim := &nodeLimits{}
	fs.Var(limitsFlag(lim), "limit", "a bound on what peers and clients may cost the node, `NAME=VALUE` (repeatable; docs/sync.md, Limits)")
	var apiHosts listFlag
	fs.Var(&apiHosts, "api-host", "a `HOST` name the API answers besides loopback ones, behind a proxy (repeatable)")
	waiting := waitingFlags(fs)
	mem := newNodeMemory()
	fs.Var(nodeMemoryFlag(mem), "memory", nodeMemoryHelp())
	tidyEvery := fs.Duration("tidy-files-every", node.DefaultTidyFilesEvery, "how often to delete the files no version names once past their 10-minute grace, a `DURATION` (docs/stores.md, Files)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	fitFiles(lim, s.logger())
	ps.limits = lim
	if fs.NArg() > 0 {
		return usageError("serve takes no arguments")
	}
	if *tidyEvery <= 0 {
		return usageError("--tidy-files-every: %v is not a positive duration", *tidyEvery)
	}
	d, err := resolveDir(*dir)
	if err != nil {
		return err
	}
	// A directory with nothing of a node in it is made one, as init makes
	// it: `minca serve` on a new machine runs a node for a new account.
	if info, err := node.Inspect(d); err != nil {
		return err
	} else if info.Empty() {
		if _, err := initDir(s, d, ""); err != nil {
			return err
		}
	}
	o := withWaiting(nodeOptions(s, d, sp, mirrors), waiting)
	o.StoreOptions.Memory = mem.store
	o.EventRingBytes = mem.eventRing
	o.TidyFilesEvery = *tidyEvery
	defer mem.limitHeap()()
	n, err := node.Open(ctx, o)
	if err != nil {
		return usageIfBadURL(err)
	}
	defer n.Close()
	if _, err := api.Token(n.Dir()); err != nil {
		return err
	}
	ln, url, err := api.Listen(*listen)
	if err != nil {
		return listenError(*listen, err)
	}
	p, peerURL, stopPeers, err := startPeers(ctx, s, n, ps)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopPeers()
	ao := lim.api
	ao.Logger, ao.Peers, ao.Hosts = s.logger(), p, apiHosts
	srv, err := api.New(n, &ao)
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
	fs := newFlags(s, "init", "init [--dir DIR] [--account-key FILE]\n\nMakes a node directory: the account key in it (a copy of FILE with\n--account-key, which adds this device to that account; else a new one),\nthe session key and its note, the account registry, and the API token.\nPrints {\"dir\",\"account\",\"session\"}. On a directory that is already a\nnode's it changes nothing, says so on stderr and prints the same line,\nwhile a node runs there too; --account-key then adds the key to a node\nof that account that lacks it.")
	dir := dirFlag(fs)
	keyFile := fs.String("account-key", "", "the account's key `FILE`, copied into DIR (a device added to that account)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("init takes no arguments")
	}
	d, err := resolveDir(*dir)
	if err != nil {
		return err
	}
	info, err := node.Inspect(d)
	if err != nil {
		return err
	}
	if info.IsNode() {
		if *keyFile != "" {
			if _, err := node.KeepAccountKey(d, *keyFile); err != nil {
				return usageError("--account-key: %v", err)
			}
			if !info.AccountKey {
				s.logger().Info("kept the account key in the node directory (a minca serve running there takes it up when started again)", "dir", d)
			}
		}
		s.logger().Info("already a node directory: nothing to make", "dir", d, "account", info.Account)
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		return writeJSON(s, map[string]any{"dir": abs, "account": info.Account, "session": info.Session})
	}
	if _, err := initDir(s, d, *keyFile); err != nil {
		return err
	}
	n, err := node.Open(ctx, nodeOptions(s, d, nil, nil))
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

// listenError says why --listen ADDR could not be listened on: an address
// in use is named with the flag that chooses another (exit 2).
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return usageError("%s is in use by another program (another minca serve?): choose another address with --listen ADDR (127.0.0.1:0 for any free port)", addr)
	}
	return usageError("--listen %s: %v", addr, err)
}
