package peers_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/node/peers"
)

// Close ends what the peers run — connections dialled by Run, accepted by
// Handler, given to Serve with a ctx that never ends — and every
// goroutine of theirs; a second Close is a no-op, and a connection given
// to Serve after it is closed at once.
func TestPeersCloseEndsItsGoroutines(t *testing.T) {
	before := ourGoroutines()
	b := newNode(t, nil)
	url := serving(t, b)
	a, c := newNode(t, &peers.Options{Peers: []string{url}}), newNode(t, nil)
	g := shared(t, b, a, c)
	b.put(g.ID, "app.notes", 1)
	ran := make(chan error, 1)
	go func() { ran <- a.peers.Run(context.Background()) }()
	cc, cb, _ := pair(t, c, b, nil)
	go b.peers.Serve(context.Background(), cb, false, "accept")
	go c.peers.Serve(context.Background(), cc, true, "dial")
	eventually(t, patient, "a and c hold b's versions", func() bool {
		return len(a.export(g.ID)) == len(b.export(g.ID)) && len(c.export(g.ID)) == len(b.export(g.ID))
	})
	if n := peersGoroutines(before); n == 0 {
		t.Fatal("no goroutine of the peers runs while they sync")
	}
	for _, n := range []*tnode{a, b, c} {
		if err := n.peers.Close(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-ran:
		if !errors.Is(err, peers.ErrClosed) {
			t.Fatalf("Run returned %v, want ErrClosed", err)
		}
	case <-time.After(patient):
		t.Fatal("Run still runs after Close")
	}
	if cc.Err() == nil || cb.Err() == nil {
		t.Fatal("a connection Serve ran is still open after Close")
	}
	eventually(t, 5*time.Second, "no goroutine of the peers left after Close", func() bool { return peersGoroutines(before) == 0 })
	// Closed again: nothing to do.
	done := make(chan error, 1)
	go func() { done <- b.peers.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(patient):
		t.Fatal("a second Close does not return")
	}
	// Served after Close: closed at once.
	cc2, cb2, _ := pair(t, c, b, nil)
	b.peers.Serve(context.Background(), cb2, false, "accept")
	if cb2.Err() == nil {
		t.Fatal("a connection given to Serve after Close is open")
	}
	cc2.Close()
	if err := a.peers.Run(context.Background()); !errors.Is(err, peers.ErrClosed) {
		t.Fatalf("Run after Close: %v", err)
	}
}

// peersGoroutines is how many goroutines not running in before run the
// peers' code.
func peersGoroutines(before map[string]string) int {
	n := 0
	for _, g := range newGoroutines(before) {
		if strings.Contains(g, "minca/node/peers.") {
			n++
		}
	}
	return n
}
