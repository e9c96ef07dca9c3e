package main

import (
	"log/slog"

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

// limitDefs lists the bounds in the order docs/sync.md's table does.
func limitDefs(l *nodeLimits) []setting {
	return []setting{
		{"peer-send-queue", "4MiB", "bytes one peer connection holds built and not yet written", sizeValue(&l.peers.SendQueue)},
		{"peer-recv-queue", "4MiB", "bytes of one peer connection's messages waiting to be handled", sizeValue(&l.peers.RecvQueue)},
		{"peer-slow-after", "30s", "how long a peer may send past its credit without reading before sync/slow", durationValue(&l.peers.SlowAfter)},
		{"peer-live-sessions", "256", "live sessions a peer may have open, by key and by address", countValue(&l.peers.LiveSessions)},
		{"peer-open-rate", "16", "NEG-OPENs a second a peer may send, by key and by address", rateValue(&l.peers.OpenRate)},
		{"peer-open-burst", "256", "NEG-OPENs a peer may send at once beyond the rate", countValue(&l.peers.OpenBurst)},
		{"peer-forgeries", "16", "versions failing the crypto gate a peer may send in the window", countValue(&l.peers.Forgeries)},
		{"peer-forgery-window", "1m", "the window forgeries are counted in", durationValue(&l.peers.ForgeryWindow)},
		{"peer-refuse-for", "10m", "how long a forger's key and address are refused", durationValue(&l.peers.RefuseFor)},
		{"peer-conns", "1024", "peer connections, in the handshake or proven", countValue(&l.server.MaxConns)},
		{"peer-conns-per-addr", "32", "peer connections from one source address", countValue(&l.server.MaxConnsPerAddr)},
		{"peer-handshakes", "64", "peer connections in hello or who; the oldest is dropped for a new one", countValue(&l.server.MaxHandshakes)},
		{"peer-handshakes-per-addr", "8", "handshakes under way from one source address", countValue(&l.server.MaxHandshakesPerAddr)},
		{"peer-conn-rate", "8", "new peer connections a second from one source address, beyond the burst", rateValue(&l.server.ConnRatePerAddr)},
		{"peer-conn-burst", "64", "new peer connections one source address may open at once beyond the rate", countValue(&l.server.ConnBurstPerAddr)},
		{"peer-sockets", "2048", "sockets the peer listener holds open", countValue(&l.listen.MaxConns)},
		{"peer-sockets-per-addr", "64", "sockets from one source address", countValue(&l.listen.MaxConnsPerAddr)},
		{"peer-http-idle", "30s", "a kept-alive HTTP connection to the peer listener idle this long is closed", durationValue(&l.listen.IdleTimeout)},
		{"handshake-timeout", "10s", "hello and who must be done within this", durationValue(&l.conn.HandshakeTimeout)},
		{"conn-idle", "60s", "a connection on which no whole frame arrives this long ends (conn/idle)", durationValue(&l.conn.IdleTimeout)},
		{"conn-write-timeout", "60s", "a frame not taken this long ends the connection (conn/stalled)", durationValue(&l.conn.WriteTimeout)},
		{"conn-linger", "2s", "after its bye, how long a connection reads on until the peer closes too", durationValue(&l.conn.Linger)},
		{"api-conns", "256", "connections the API holds open", countValue(&l.api.MaxConns)},
		{"api-idle", "30s", "a kept-alive API connection idle this long is closed", durationValue(&l.api.IdleTimeout)},
	}
}

// limitsFlag is --limit NAME=VALUE, repeatable, setting l.
func limitsFlag(l *nodeLimits) *settingsFlag {
	return &settingsFlag{noun: "limit", defs: limitDefs(l)}
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
