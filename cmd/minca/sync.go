package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/transport"
)

// peerSpec is how serve keeps peers, from its flags (docs/sync.md §8).
type peerSpec struct {
	listen, cert, key string
	peers, relays     listFlag
	holds             listFlag
	relay             bool
	origins           listFlag
	limits            *nodeLimits
	files             string
}

func peerFlags(fs *flags) *peerSpec {
	ps := &peerSpec{}
	fs.StringVar(&ps.listen, "peer-listen", "", "accept peers at `ADDR` (HOST:PORT), path /minca: plain on loopback only, TLS with --tls-cert and --tls-key")
	fs.StringVar(&ps.cert, "tls-cert", "", "the TLS certificate `FILE` (PEM) --peer-listen serves")
	fs.StringVar(&ps.key, "tls-key", "", "the TLS key `FILE` (PEM) of --tls-cert")
	fs.Var(&ps.peers, "peer", "a peer to keep a connection with, `URL` ws://HOST:PORT/minca (loopback) or wss://… (repeatable)")
	fs.Var(&ps.relays, "relay", "a relay to meet peers at, `URL` ws(s)://HOST:PORT/minca/relay: WebRTC to each peer in a space's room (repeatable)")
	fs.Var(&ps.holds, "hold", "hold only some collections of a space, `SPACE=COLL,COLL…` (repeatable; docs/sync.md §7.5)")
	fs.BoolVar(&ps.relay, "serve-relay", false, "act as a relay too, at /minca/relay on --peer-listen")
	fs.Var(&ps.origins, "peer-origin", "a web `ORIGIN` (https://app.example) whose pages may connect to --peer-listen from a browser (repeatable; default none)")
	fs.StringVar(&ps.files, "files", "all", "which files versions name to fetch from peers unasked: `POLICY` all, none or under:SIZE (under:8MiB); a file a reader asks for is fetched whatever it says (docs/sync.md §7.7)")
	return ps
}

func (ps *peerSpec) collections() (map[string][]string, error) {
	out := map[string][]string{}
	for _, h := range ps.holds {
		sp, cs, ok := strings.Cut(h, "=")
		if !ok || sp == "" || cs == "" {
			return nil, usageError("--hold %q: want SPACE=COLL,COLL…", h)
		}
		out[sp] = append(out[sp], strings.Split(cs, ",")...)
	}
	return out, nil
}

// startPeers starts the node's peers as serve's flags say; stop ends
// them. url is where peers reach it ("" without --peer-listen).
func startPeers(ctx context.Context, s *stdio, n *node.Node, ps *peerSpec) (p *peers.Peers, url string, stop func(), err error) {
	if ps.relay && ps.listen == "" {
		return nil, "", nil, usageError("--serve-relay needs --peer-listen")
	}
	colls, err := ps.collections()
	if err != nil {
		return nil, "", nil, err
	}
	files, err := peers.ParseFilePolicy(ps.files)
	if err != nil {
		return nil, "", nil, usageError("%v", err)
	}
	lim := ps.limits
	if lim == nil {
		lim = &nodeLimits{}
	}
	topt := lim.conn
	topt.Self = peers.NodeSelf(n)
	pl := lim.peers
	p, err = peers.New(peers.NodeHost(n), &peers.Options{
		Transport: &topt, Limits: &pl,
		Peers: ps.peers, Relays: ps.relays, Collections: colls, Logger: s.logger(), Files: files,
	})
	if err != nil {
		return nil, "", nil, usageError("%v", err)
	}
	pctx, cancel := context.WithCancel(ctx)
	var closers []func()
	if ps.listen != "" {
		so := lim.server
		so.Origins, so.Logger = ps.origins, s.logger()
		srv, err := p.Handler(pctx, &so)
		if err != nil {
			cancel()
			return nil, "", nil, err
		}
		mux := http.NewServeMux()
		mux.Handle(transport.PathPeer, srv)
		closers = append(closers, func() { srv.Close() })
		if ps.relay {
			r, err := transport.NewRelay(&transport.Options{Self: transport.Carrier(mustKey())}, nil)
			if err != nil {
				cancel()
				return nil, "", nil, err
			}
			mux.Handle(transport.PathRelay, r)
			closers = append(closers, func() { r.Close() })
		}
		lo := lim.listen
		lo.CertFile, lo.KeyFile = ps.cert, ps.key
		ln, err := transport.Listen(ps.listen, mux, &lo)
		if err != nil {
			cancel()
			return nil, "", nil, usageError("--peer-listen: %v", err)
		}
		closers = append([]func(){func() { ln.Close() }}, closers...)
		url = ln.URL(transport.PathPeer)
	}
	done := make(chan struct{})
	go func() { p.Run(pctx); close(done) }()
	return p, url, func() {
		cancel()
		for _, c := range closers {
			c()
		}
		<-done
		// Every connection ended and every goroutine of the peers with
		// them, before the node closes its store.
		p.Close()
	}, nil
}

// mustKey is a throwaway key: a relay's, or minca sync's without --key.
func mustKey() *identity.PrivateKey {
	k, err := identity.GenerateKey()
	if err != nil {
		panic(err) // the system's randomness failed
	}
	return k
}

func runSync(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "sync", `sync [--store URL] [--key FILE] [--deadline D] PEER [SPACE…]

Runs one reconciliation (docs/sync.md §7) of each SPACE, or of every space
the store holds, with the peer at PEER (ws://HOST:PORT/minca on loopback,
wss://… elsewhere): what the peer lacks is sent, what the store lacks is
received and judged (02 §9), then it exits. It connects with --key, or a
throwaway key, and no note (from: null): a peer serves it public spaces,
and private ones whose keepers name the key. Prints one JSON line
{"peer","spaces":[{"space","code","sent","received",…}],"sent","received",
"refused","later","held","bytesSent","bytesReceived","negentropyBytes",
"rounds","wireSent","wireReceived"}. Exit 0 when every space reconciled
with nothing refused, 1 when one did not (not held there, ended) or a
version was refused, 3 when the store is not there, 4 when the peer cannot
be reached or the connection broke: try again.`)
	sp := storeFlags(fs, false)
	judgeFlag(fs, sp)
	keyFile := fs.String("key", "", "the key `FILE` to connect with (default: a throwaway key)")
	deadline := fs.Duration("deadline", 10*time.Minute, "give up after `D`, exit 4")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() < 1 {
		return usageError("sync takes a PEER URL")
	}
	key := mustKey()
	if *keyFile != "" {
		k, err := identity.ReadKeyFile(*keyFile)
		if err != nil {
			return usageError("--key: %v", err)
		}
		key = k
	}
	sto, err := sp.open(ctx, useStore)
	if err != nil {
		return err
	}
	defer sto.Close()
	full := judge.NewSpaceJudge(noteChecker())
	full.Source = sto.Engine()
	host := storeHost{st: sto.Engine(), judge: full}
	p, err := peers.New(host, &peers.Options{Transport: &transport.Options{Self: transport.Carrier(key)}, Logger: s.logger()})
	if err != nil {
		return err
	}
	defer p.Close() // before the store, deferred above
	cctx, cancel := context.WithTimeout(ctx, *deadline)
	defer cancel()
	c, err := transport.Dial(cctx, fs.Arg(0), p.TransportOptions())
	if err != nil {
		if errors.Is(err, transport.ErrUnreachable) || transport.Code(err) != "" || cctx.Err() != nil {
			return &exitError{code: exitUnreachable, err: fmt.Errorf("the peer %s: %w", fs.Arg(0), err)}
		}
		return usageError("the peer %s: %v", fs.Arg(0), err)
	}
	defer c.Close()
	sum, err := p.Sync(cctx, c, fs.Args()[1:])
	// Sync ends the connection's sessions when every space is done, which
	// can cut a last frame short: a broken connection matters only to a
	// sync it left unfinished.
	finished := err == nil || errors.Is(err, peers.ErrNoSpaces)
	for _, r := range sum.Spaces {
		finished = finished && (r.Code == peers.CodeDone || r.Code == peers.CodeNotHeld)
	}
	if !finished && c.Err() != nil && ctx.Err() == nil {
		return &exitError{code: exitUnreachable, err: fmt.Errorf("the peer %s: the connection ended: %w", fs.Arg(0), c.Err())}
	}
	if err != nil && !errors.Is(err, peers.ErrNoSpaces) {
		if cctx.Err() != nil && ctx.Err() == nil {
			return &exitError{code: exitUnreachable, err: fmt.Errorf("the peer %s: not done within %v", fs.Arg(0), *deadline)}
		}
		return err
	}
	if err := writeJSON(s, sum); err != nil {
		return err
	}
	if errors.Is(err, peers.ErrNoSpaces) {
		return failed(errors.New("no space to sync: the store holds none, or none the peer may read"))
	}
	for _, r := range sum.Spaces {
		if r.Code != peers.CodeDone {
			return failed(fmt.Errorf("space %s: %s: %s", r.Space, r.Code, r.Message))
		}
	}
	if sum.Refused > 0 {
		return failed(fmt.Errorf("%d versions the peer sent were refused", sum.Refused))
	}
	return nil
}

// storeHost is a store to sync outside a node: its spaces are those
// whose genesis it keeps.
type storeHost struct {
	st    *engine.Store
	judge *judge.SpaceJudge
}

func (h storeHost) Store() *engine.Store { return h.st }

func (h storeHost) Spaces(ctx context.Context) ([]string, error) {
	ids, err := h.st.Spaces(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		if _, ok, err := judge.GenesisOf(ctx, h.st, id); err == nil && ok {
			out = append(out, id)
		}
	}
	return out, nil
}

func (h storeHost) MayRead(ctx context.Context, spaceID string, p transport.Peer) (bool, error) {
	return peers.MayRead(ctx, h.judge, spaceID, p)
}

func runPeers(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "peers", `peers [--dir DIR]

Lists the running node's connections to its peers and their sync sessions
(docs/sync.md §8), one JSON line each: {"via","state","peer","account",
"since","lastError","sessions":[{"space","opener","phase","ended",
"sent","received",…}],"totals"}. A node that is not serving has none.`)
	dir := dirFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("peers takes no arguments")
	}
	return callLines(ctx, s, *dir, "/v1/peers", "peers", nil)
}
