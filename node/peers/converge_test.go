package peers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

// ringLinks tells how a ring's links stand: how many dialled connections
// are being served now, how many were served in all, and how many dials
// failed; changed gets a token at each change.
type ringLinks struct {
	mu                   sync.Mutex
	live, served, failed int
	changed              chan struct{}
}

func (r *ringLinks) update(f func()) {
	r.mu.Lock()
	f()
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// wait waits until cond holds of the counts; a minute is a guard against
// a hang, not a measure.
func (r *ringLinks) wait(t *testing.T, what string, cond func(live, served, failed int) bool) {
	t.Helper()
	for {
		r.mu.Lock()
		ok := cond(r.live, r.served, r.failed)
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-time.After(time.Minute):
			t.Fatalf("waiting for %s: nothing changed within a minute", what)
		}
	}
}

// ring connects each node to the next over net (node i dials node i+1),
// redialling as links fail; it stops with ctx.
func ring(ctx context.Context, t *testing.T, net *transporttest.Network, ns []*tnode) (*sync.WaitGroup, *ringLinks) {
	var wg sync.WaitGroup
	links := &ringLinks{changed: make(chan struct{}, 1)}
	for i, n := range ns {
		name := fmt.Sprintf("n%d", i)
		stop := net.Listen(name, n.topt, func(ctx context.Context, c *transport.Conn) { n.peers.Serve(ctx, c, false, "accept") })
		t.Cleanup(stop)
	}
	for i, n := range ns {
		to := fmt.Sprintf("n%d", (i+1)%len(ns))
		wg.Add(1)
		go func() {
			defer wg.Done()
			transport.Redial(ctx, func(ctx context.Context) (*transport.Conn, error) {
				c, err := net.Dial(ctx, to, n.topt)
				if err != nil {
					links.update(func() { links.failed++ })
				}
				return c, err
			}, func(ctx context.Context, c *transport.Conn) {
				links.update(func() { links.live++; links.served++ })
				defer links.update(func() { links.live-- })
				n.peers.Serve(ctx, c, true, "dial "+to)
			}, &transport.RedialOptions{Min: 10 * time.Millisecond, Max: 200 * time.Millisecond})
		}()
	}
	return &wg, links
}

func converged(ns []*tnode, spaceID string) bool {
	first := ns[0].export(spaceID)
	for _, n := range ns[1:] {
		if !slices.Equal(first, n.export(spaceID)) {
			return false
		}
	}
	return true
}

// Three nodes write in a shared space while their links are reset, some
// in the middle of a frame, and taken down: once the links hold they hold
// the same versions, none lost, none twice.
func TestThreeNodesConvergeOverFaultyLinks(t *testing.T) {
	ns := []*tnode{newNode(t, nil), newNode(t, nil), newNode(t, nil)}
	g := shared(t, ns...)
	net := transporttest.NewNetwork(&transporttest.Faults{Delay: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	wg, links := ring(ctx, t, net, ns)
	defer func() { cancel(); wg.Wait() }()

	var writers sync.WaitGroup
	for k, n := range ns {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range 60 {
				n.put(g.ID, "app.notes", k*1000+i)
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	// Links fail while they write, each round once the three links the
	// last round took down are up again: reset (mid-batch), reset inside
	// the frame, a node unreachable until a dial to it has failed.
	for round := range 6 {
		links.wait(t, "the three links up again", func(live, served, _ int) bool {
			return live == len(ns) && served >= len(ns)*(round+1)
		})
		switch round % 3 {
		case 0:
			net.ResetAll()
		case 1:
			// The three links made next reset once they carry 20 kB.
			links.mu.Lock()
			served := links.served
			links.mu.Unlock()
			net.SetFaults(transporttest.Faults{Delay: time.Millisecond, ResetAfter: 20_000})
			net.ResetAll()
			links.wait(t, "three links made that reset inside a frame", func(_, s, _ int) bool { return s >= served+len(ns) })
			net.SetFaults(transporttest.Faults{Delay: time.Millisecond})
		case 2:
			net.SetDown("n1", true)
			links.mu.Lock()
			failed := links.failed
			links.mu.Unlock()
			net.ResetAll()
			links.wait(t, "a dial to the node that is down to fail", func(_, _, f int) bool { return f > failed })
			net.SetDown("n1", false)
		}
	}
	// The last round's three links are made again before the count below:
	// the nodes may converge before they are, and then nothing waits.
	links.wait(t, "the three links up again", func(live, served, _ int) bool {
		return live == len(ns) && served >= len(ns)*7
	})
	writers.Wait()
	net.SetFaults(transporttest.Faults{})
	net.ResetAll()
	eventually(t, 30*time.Second, "three nodes converge", func() bool { return converged(ns, g.ID) })
	if got := len(ns[0].export(g.ID)); got != 180 {
		t.Errorf("%d versions held, want 180", got)
	}
	if made := len(net.Links()); made < 3+6*3 {
		t.Errorf("%d links made: each of six rounds takes three down, and they are made again", made)
	}
	// Resuming reconciles again, never resends everything: each version
	// reaches two nodes, and at most a few times over.
	var sent, held int64
	for _, n := range ns {
		tot := n.peers.Totals()
		sent += tot.Sent
		held += tot.Held
	}
	t.Logf("links %d, versions sent %d, received already held %d", len(net.Links()), sent, held)
	if sent > 4*180*2 {
		t.Errorf("%d versions sent for 180 versions on three nodes", sent)
	}
}

// A node holding only some collections syncs those (and the access
// history) and nothing else; the others converge on everything.
func TestPartialHold(t *testing.T) {
	full1, full2 := newNode(t, nil), newNode(t, nil)
	var part *tnode
	ns := []*tnode{full1, full2}
	g := shared(t, ns...)
	part = newNode(t, &peers.Options{Collections: map[string][]string{g.ID: {"app.chat"}}})
	if err := part.JoinGenesis(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		full1.put(g.ID, "app.chat", i)
		full2.put(g.ID, "app.photos", i)
	}
	net := transporttest.NewNetwork(nil)
	ctx, cancel := context.WithCancel(context.Background())
	wg, _ := ring(ctx, t, net, []*tnode{full1, full2, part})
	defer func() { cancel(); wg.Wait() }()
	eventually(t, 20*time.Second, "the full nodes converge", func() bool { return converged(ns, g.ID) })
	chatOnly := func() []string {
		var out []string
		for _, raw := range full1.export(g.ID) {
			if strings.Contains(raw, `"collection":"app.chat"`) {
				out = append(out, raw)
			}
		}
		return out
	}
	eventually(t, 20*time.Second, "the partial node holds app.chat", func() bool { return slices.Equal(part.export(g.ID), chatOnly()) })
	for i := range 5 {
		full2.put(g.ID, "app.chat", 100+i)
		full2.put(g.ID, "app.photos", 100+i)
	}
	eventually(t, 20*time.Second, "live app.chat reaches the partial node, app.photos does not", func() bool {
		return converged(ns, g.ID) && slices.Equal(part.export(g.ID), chatOnly())
	})
}
