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

// ring connects each node to the next over net (node i dials node i+1),
// redialling as links fail; it stops with ctx.
func ring(ctx context.Context, t *testing.T, net *transporttest.Network, ns []*tnode) *sync.WaitGroup {
	var wg sync.WaitGroup
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
			transport.Redial(ctx, func(ctx context.Context) (*transport.Conn, error) { return net.Dial(ctx, to, n.topt) },
				func(ctx context.Context, c *transport.Conn) { n.peers.Serve(ctx, c, true, "dial "+to) },
				&transport.RedialOptions{Min: 10 * time.Millisecond, Max: 200 * time.Millisecond})
		}()
	}
	return &wg
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
	wg := ring(ctx, t, net, ns)
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
	// Links fail while they write: reset (mid-batch), reset inside the
	// frame, a node unreachable for a while.
	for round := range 6 {
		time.Sleep(40 * time.Millisecond)
		switch round % 3 {
		case 0:
			net.ResetAll()
		case 1:
			net.SetFaults(transporttest.Faults{Delay: time.Millisecond, ResetAfter: 20_000})
			net.ResetAll()
		case 2:
			net.SetFaults(transporttest.Faults{Delay: time.Millisecond})
			net.SetDown("n1", true)
			net.ResetAll()
			time.Sleep(60 * time.Millisecond)
			net.SetDown("n1", false)
		}
	}
	writers.Wait()
	net.SetFaults(transporttest.Faults{})
	net.ResetAll()
	eventually(t, 30*time.Second, "three nodes converge", func() bool { return converged(ns, g.ID) })
	if got := len(ns[0].export(g.ID)); got != 180 {
		t.Errorf("%d versions held, want 180", got)
	}
	if links := len(net.Links()); links < 3*4 {
		t.Errorf("%d links made: the faults did not take links down", links)
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
	wg := ring(ctx, t, net, []*tnode{full1, full2, part})
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
