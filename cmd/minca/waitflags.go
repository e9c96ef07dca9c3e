package main

import (
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/store"
)

// waitingFlags are serve's bounds on the versions its peers send that
// wait for what they name (02 §9.5; docs/sync.md §7.3).
func waitingFlags(fs *flags) *engine.WaitingLimits {
	l := &engine.WaitingLimits{}
	fs.Int64Var(&l.MaxBytes, "waiting-bytes", engine.DefaultMaxWaitingBytes,
		"hold at most `BYTES` of versions from peers that wait for what they name, all peers together; past it the oldest of the peer holding the most are dropped")
	fs.Int64Var(&l.MaxBytesPerSource, "waiting-bytes-per-peer", engine.DefaultMaxWaitingBytesPerSource,
		"hold at most `BYTES` of waiting versions from one peer (its who key); past it that peer's oldest are dropped")
	fs.Func("waiting-age", "drop a peer's waiting version this `DURATION` after it arrived (default 24h)", durationFlag(&l.MaxAge))
	return l
}

// withWaiting sets a node's waiting bounds from serve's flags.
func withWaiting(o *node.Options, l *engine.WaitingLimits) *node.Options {
	if o.StoreOptions == nil {
		o.StoreOptions = &store.Options{}
	}
	o.StoreOptions.Waiting = store.PeersBounded(*l)
	return o
}
