package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/minca-go/minca/carrier"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/transport"
)

// carryNetwork is the network a carrier runs on: sync sessions
// (docs/sync.md §7–§9) at the relays given, showing the carrier by its key
// alone (transport.Carrier: from null, 06 §4.1).
type carryNetwork struct {
	relays []string
	s      *stdio
}

// carryRescan is how often the carrier looks for spaces newly carried:
// a pass that arrives in a carry space names a space to join the room of
// at once, and a carrier holds few spaces, so it looks often.
const carryRescan = 2 * time.Second

func (n carryNetwork) Run(ctx context.Context, c *carrier.Carrier) error {
	p, err := peers.New(c, &peers.Options{
		Transport: &transport.Options{Self: c.Self()},
		Relays:    n.relays, Rescan: carryRescan, Logger: n.s.logger(),
	})
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Run(ctx)
}

func runCarry(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "carry", "carry --dir DIR [--relay URL]… [--store URL] [--grant FILE]…\n\n"+
		"Runs a carrier (06 §4): it keeps an account's spaces online and backed up,\n"+
		"with the files their versions name, without being able to read them. DIR holds its key (made on first use) and\n"+
		"the carry grants it accepted; --grant FILE takes one more, a CarryGrant as\n"+
		"the account's home answers it (06 §4.3; `minca carrier add` writes one).\n"+
		"Its store is any store URL — pebble:DIR/store by default, or folder: or\n"+
		"s3:// to keep everything it carries in a bucket — and holds no plaintext of\n"+
		"a private space. It syncs the spaces it carries on each relay given and on\n"+
		"the relays its grants name.\n\n"+
		"Prints JSON lines: {\"type\":\"carrier\",\"did\",\"accounts\",\"spaces\",\"relays\"}\n"+
		"once it runs, then an event a line: carrying, dropped, disconnected (the\n"+
		"account removed it) and wake {account, space, collection, open, wake,\n"+
		"version} (06 §4.4); and the network's sync state, {\"type\":\"sync\",\n"+
		"\"state\"…}. SIGINT or SIGTERM flush the store and exit 130 or 143.")
	dir := fs.String("dir", "", "the carrier's `DIR`ectory: its key, its grants and (by default) its store (required)")
	storeURL := fs.String("store", "", "the store `URL`: pebble:PATH, sqlite:FILE, memory:, folder:PATH, s3://BUCKET/PREFIX?… (default pebble:DIR/store)")
	var relays, grants listFlag
	fs.Var(&relays, "relay", "a relay `URL` to meet peers on, ws:// or wss:// (repeatable)")
	fs.Var(&grants, "grant", "a carry grant `FILE` to accept (repeatable)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("carry takes no arguments")
	}
	if *dir == "" {
		return usageError("--dir is required: the carrier's directory")
	}
	var gs []*connect.CarryGrant
	for _, f := range grants {
		b, err := os.ReadFile(f)
		if err != nil {
			return usageError("--grant %s: %v", f, err)
		}
		g, err := connect.ParseCarryGrant(b)
		if err != nil {
			return usageError("--grant %s: %v", f, err)
		}
		gs = append(gs, g)
	}
	c, err := carrier.Open(ctx, &carrier.Options{Dir: *dir, Store: *storeURL, Logger: s.logger()})
	if err != nil {
		return usageIfBadURL(err)
	}
	defer c.Close()
	sub := c.Subscribe(0)
	var out sync.Mutex
	emit := func(v any) error {
		out.Lock()
		defer out.Unlock()
		return writeJSON(s, v)
	}
	for i, g := range gs {
		if err := c.Accept(ctx, g); err != nil {
			var r *connect.Refusal
			if errors.As(err, &r) {
				return usageError("--grant %s: %v", grants[i], err)
			}
			return err
		}
	}
	all := append(append([]string{}, relays...), c.Relays()...)
	spaces, err := c.Spaces(ctx)
	if err != nil {
		return err
	}
	if err := emit(map[string]any{"type": "carrier", "did": c.DID(), "accounts": c.Accounts(), "spaces": spaces, "relays": all}); err != nil {
		return err
	}
	if len(all) > 0 {
		if err := emit(map[string]any{"type": "sync", "state": "running", "relays": all}); err != nil {
			return err
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range sub.C {
			if err := emit(e); err != nil {
				return
			}
		}
	}()
	var runErr error
	switch {
	case len(all) > 0:
		runErr = c.Run(ctx, carryNetwork{relays: all, s: s})
	default:
		<-ctx.Done()
	}
	sub.Close()
	<-done
	if err := c.Close(); err != nil {
		return err
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return fmt.Errorf("the network: %w", runErr)
	}
	return ctx.Err()
}
