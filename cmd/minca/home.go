package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/minca-go/minca/accounthome"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/transport"
)

// defaultHomeListen is where `minca home` listens unless told otherwise.
const defaultHomeListen = "127.0.0.1:7466"

func runHome(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "home", "home [--dir DIR] [--listen ADDR] [--relay URL] [--name NAME] [--days N]\n\nRuns a minimal account home (06 §2–§3) for local use and tests: it holds the\naccount key of DIR (made as `minca init` makes it when DIR has none), serves\nthe connect page at http://localhost:PORT/connect on a loopback ADDR, answers\nprograms that connect by code (`minca connect`) and apps that ask over HTTP,\nand keeps the connections it grants: GET /connections lists them, and\ndisconnecting one revokes its keys where the account writes (docs/connect.md,\n\"The account home\"). Programs by code meet it on the relay at URL; without\n--relay the home runs one itself, at ws://ADDR/minca/relay. The account's node\nruns in DIR while the home does (no `minca serve` on DIR meanwhile). Prints\n{\"url\",\"connect\",\"relay\",\"account\",\"dir\"} once it listens; SIGINT or SIGTERM\nstop it (exit 130 or 143).")
	dir := dirFlag(fs)
	listen := fs.String("listen", defaultHomeListen, "where the home listens: `ADDR` HOST:PORT on a loopback address (port 0: any free one)")
	relay := fs.String("relay", "", "the relay `URL` (ws:// or wss://, …/minca/relay) programs meet the home on; default: one the home runs on ADDR")
	name := fs.String("name", "", "the account's `NAME`, as grants carry it")
	days := fs.Int("days", 0, "how many `DAYS` (1–365) a note granted lasts; default: what the request asks, else 7")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("home takes no arguments")
	}
	if *days < 0 || *days > 365 {
		return usageError("--days %d: want 1 to 365", *days)
	}
	if *relay != "" {
		if err := checkRelayURL(*relay); err != nil {
			return usageError("--relay: %v", err)
		}
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		return usageError("--listen %q: %v", *listen, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usageError("--listen %q: the home listens on a loopback address only (127.0.0.1, [::1], localhost)", *listen)
	}
	o := nodeOptions(s, *dir, nil, nil)
	if o.Dir == "" {
		if o.Dir, err = node.DefaultDir(); err != nil {
			return usageError("%v", err)
		}
	}
	_, noKey := os.Stat(filepath.Join(o.Dir, node.AccountKeyName))
	if held, _ := node.HeldNote(o.Dir); noKey != nil && held != nil {
		return usageError("%s holds a note from %s and no account key: it is a program's directory, not an account's", o.Dir, held.Iss)
	}
	if _, err := initDir(s, o.Dir, ""); err != nil {
		return err
	}
	account, err := identity.ReadKeyFile(filepath.Join(o.Dir, node.AccountKeyName))
	if err != nil {
		return usageError("the account key: %v", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return listenError(*listen, err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	homeURL := "http://localhost:" + port
	n, err := node.Open(ctx, o)
	if err != nil {
		return err
	}
	defer n.Close()
	mux := http.NewServeMux()
	relayURL := *relay
	if relayURL == "" {
		key, err := identity.GenerateKey()
		if err != nil {
			return err
		}
		r, err := transport.NewRelay(&transport.Options{Self: transport.Carrier(key)}, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		mux.Handle(transport.PathRelay, r)
		relayURL = "ws://" + net.JoinHostPort(host, port) + transport.PathRelay
	}
	h, err := accounthome.New(&accounthome.Options{Node: n, Account: account, Name: *name, Relay: relayURL, Days: *days, Logger: s.logger()})
	if err != nil {
		return err
	}
	defer h.Close()
	mux.Handle("/", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if err := writeJSON(s, map[string]any{"url": homeURL, "connect": homeURL + "/connect", "relay": relayURL, "account": account.DID(), "dir": n.Dir()}); err != nil {
		return err
	}
	s.logger().Info("the account home listens", "connect", homeURL+"/connect", "relay", relayURL)
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.Close()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		srv.Close()
	}
	return n.Close()
}

// checkRelayURL refuses a relay address that is not ws:// or wss://.
func checkRelayURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return fmt.Errorf("%q is not a ws:// or wss:// address", s)
	}
	return nil
}
