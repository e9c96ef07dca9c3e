package main

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minca-go/minca/node/api"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/transport"
)

// nodeLimits are every bound serve keeps on what others may cost the
// node (docs/sync.md, Limits), each named for `--limit NAME=VALUE`.
type nodeLimits struct {
	peers  peers.Limits
	server transport.ServerOptions
	listen transport.ListenOptions
	conn   transport.Options
	api    api.Options
}

// limitDef is one bound: its name, its default as written, and where it
// goes.
type limitDef struct {
	name, def, what string
	set             func(l *nodeLimits, v string) error
}

func sizeLimit(p *int) func(*nodeLimits, string) error {
	return func(_ *nodeLimits, v string) error {
		n, err := parseSize(v)
		*p = n
		return err
	}
}

func intLimit(p *int) func(*nodeLimits, string) error {
	return func(_ *nodeLimits, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && n <= 0 {
			err = fmt.Errorf("%d is not a positive count", n)
		}
		*p = n
		return err
	}
}

func durLimit(p *time.Duration) func(*nodeLimits, string) error {
	return func(_ *nodeLimits, v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = fmt.Errorf("%v is not a positive duration", d)
		}
		*p = d
		return err
	}
}

func rateLimit(p *float64) func(*nodeLimits, string) error {
	return func(_ *nodeLimits, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err == nil && !(f > 0) {
			err = fmt.Errorf("%v is not a positive rate", f)
		}
		*p = f
		return err
	}
}

// limitDefs lists the bounds in the order docs/sync.md's table does.
func limitDefs(l *nodeLimits) []limitDef {
	return []limitDef{
		{"peer-send-queue", "4MiB", "bytes one peer connection holds built and not yet written", sizeLimit(&l.peers.SendQueue)},
		{"peer-recv-queue", "4MiB", "bytes of one peer connection's messages waiting to be handled", sizeLimit(&l.peers.RecvQueue)},
		{"peer-slow-after", "30s", "how long a peer may send past its credit without reading before sync/slow", durLimit(&l.peers.SlowAfter)},
		{"peer-live-sessions", "256", "live sessions a peer may have open, by key and by address", intLimit(&l.peers.LiveSessions)},
		{"peer-open-rate", "16", "NEG-OPENs a second a peer may send, by key and by address", rateLimit(&l.peers.OpenRate)},
		{"peer-open-burst", "256", "NEG-OPENs a peer may send at once beyond the rate", intLimit(&l.peers.OpenBurst)},
		{"peer-forgeries", "16", "versions failing the crypto gate a peer may send in the window", intLimit(&l.peers.Forgeries)},
		{"peer-forgery-window", "1m", "the window forgeries are counted in", durLimit(&l.peers.ForgeryWindow)},
		{"peer-refuse-for", "10m", "how long a forger's key and address are refused", durLimit(&l.peers.RefuseFor)},
		{"peer-conns", "1024", "peer connections, in the handshake or proven", intLimit(&l.server.MaxConns)},
		{"peer-conns-per-addr", "32", "peer connections from one source address", intLimit(&l.server.MaxConnsPerAddr)},
		{"peer-handshakes", "64", "peer connections in hello or who; the oldest is dropped for a new one", intLimit(&l.server.MaxHandshakes)},
		{"peer-handshakes-per-addr", "8", "handshakes under way from one source address", intLimit(&l.server.MaxHandshakesPerAddr)},
		{"peer-conn-rate", "8", "new peer connections a second from one source address, beyond the burst", rateLimit(&l.server.ConnRatePerAddr)},
		{"peer-conn-burst", "64", "new peer connections one source address may open at once beyond the rate", intLimit(&l.server.ConnBurstPerAddr)},
		{"peer-sockets", "2048", "sockets the peer listener holds open", intLimit(&l.listen.MaxConns)},
		{"peer-sockets-per-addr", "64", "sockets from one source address", intLimit(&l.listen.MaxConnsPerAddr)},
		{"peer-http-idle", "30s", "a kept-alive HTTP connection to the peer listener idle this long is closed", durLimit(&l.listen.IdleTimeout)},
		{"handshake-timeout", "10s", "hello and who must be done within this", durLimit(&l.conn.HandshakeTimeout)},
		{"conn-idle", "60s", "a connection on which no whole frame arrives this long ends (conn/idle)", durLimit(&l.conn.IdleTimeout)},
		{"conn-write-timeout", "60s", "a frame not taken this long ends the connection (conn/stalled)", durLimit(&l.conn.WriteTimeout)},
		{"conn-linger", "2s", "after its bye, how long a connection reads on until the peer closes too", durLimit(&l.conn.Linger)},
		{"api-conns", "256", "connections the API holds open", intLimit(&l.api.MaxConns)},
		{"api-idle", "30s", "a kept-alive API connection idle this long is closed", durLimit(&l.api.IdleTimeout)},
	}
}

// limitsFlag is --limit NAME=VALUE, repeatable.
type limitsFlag struct {
	l   *nodeLimits
	set []string
}

func (f *limitsFlag) String() string { return strings.Join(f.set, ",") }

func (f *limitsFlag) Set(s string) error {
	name, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want NAME=VALUE, have %q", s)
	}
	defs := limitDefs(f.l)
	i := slices.IndexFunc(defs, func(d limitDef) bool { return d.name == name })
	if i < 0 {
		names := make([]string, len(defs))
		for j, d := range defs {
			names[j] = d.name
		}
		return fmt.Errorf("no limit %q; the limits are %s", name, strings.Join(names, ", "))
	}
	if err := defs[i].set(f.l, v); err != nil {
		return fmt.Errorf("%s=%s: %v", name, v, err)
	}
	f.set = append(f.set, s)
	return nil
}

// parseSize reads a byte count: a number, optionally with KiB, MiB or
// GiB.
func parseSize(v string) (int, error) {
	mul := 1
	for _, u := range []struct {
		suffix string
		mul    int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mul = n, u.mul
			break
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive size (bytes, or with KiB, MiB, GiB)", v)
	}
	return n * mul, nil
}

// fitFiles raises the file limit to its hard limit and shrinks the
// connection caps that do not fit in it, keeping a share for the store
// and the rest of the process, so a flood of sockets never leaves the
// node unable to open a file or accept its own client.
func fitFiles(l *nodeLimits, log *slog.Logger) {
	soft, err := raiseFileLimit()
	if err != nil {
		log.Warn("the file limit could not be raised", "err", err)
	}
	if soft <= 0 {
		return
	}
	const reserve = 256 // the store's files, the mirrors', the process's own
	avail := soft - reserve
	peer := l.listen.MaxConns
	if peer == 0 {
		peer = 2048
	}
	apiN := l.api.MaxConns
	if apiN == 0 {
		apiN = api.DefaultMaxConns
	}
	if peer+apiN <= avail {
		return
	}
	if avail < 64 {
		avail = 64
	}
	apiN = max(16, min(apiN, avail/4))
	peer = max(16, avail-apiN)
	log.Warn("the file limit is low: connection caps lowered to fit", "files", soft, "peer-sockets", peer, "api-conns", apiN)
	l.listen.MaxConns, l.api.MaxConns = peer, apiN
	if l.server.MaxConns == 0 || l.server.MaxConns > peer {
		l.server.MaxConns = peer
	}
}
