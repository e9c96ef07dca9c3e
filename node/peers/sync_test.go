package peers_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/minca-go/minca/node/peers"
)

func TestSyncOnceBothWays(t *testing.T) {
	a, b := newNode(t, nil), newNode(t, nil)
	g := shared(t, a, b)
	for i := range 300 {
		a.put(g.ID, "app.notes", i)
	}
	for i := range 50 {
		b.put(g.ID, "app.notes", i)
	}
	ca, cb, _ := pair(t, a, b, nil)
	go b.peers.Serve(context.Background(), cb, false, "accept")
	sum, err := a.peers.Sync(context.Background(), ca, []string{g.ID})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", sum)
	if len(sum.Spaces) != 1 || sum.Spaces[0].Code != peers.CodeDone {
		t.Fatalf("spaces: %+v", sum.Spaces)
	}
	if sum.Received != 50+1 && sum.Received != 50 {
		// b's own access changes are none: the genesis founded both.
		t.Errorf("received %d, want 50", sum.Received)
	}
	if sum.Sent < 300 || sum.Refused != 0 {
		t.Errorf("sent %d refused %d", sum.Sent, sum.Refused)
	}
	ea, eb := a.export(g.ID), b.export(g.ID)
	if !slices.Equal(ea, eb) {
		t.Fatalf("exports differ: %d vs %d", len(ea), len(eb))
	}
	// Again: nothing to send.
	sum, err = a.peers.Sync(context.Background(), ca, []string{g.ID})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Sent != 0 || sum.Received != 0 {
		t.Errorf("a second reconciliation carried %d / %d versions", sum.Sent, sum.Received)
	}
}

func TestLivePush(t *testing.T) {
	a, b := newNode(t, nil), newNode(t, nil)
	g := shared(t, a, b)
	a.put(g.ID, "app.notes", 0)
	ca, cb, _ := pair(t, a, b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.peers.Serve(ctx, cb, false, "accept")
	go a.peers.Serve(ctx, ca, true, "dial")
	eventually(t, 10*time.Second, "the first version reaches b", func() bool { return len(b.export(g.ID)) == len(a.export(g.ID)) })
	for i := 1; i < 20; i++ {
		a.put(g.ID, "app.notes", i)
		b.put(g.ID, "app.notes", 100+i)
	}
	eventually(t, 10*time.Second, "live versions reach both", func() bool { return slices.Equal(a.export(g.ID), b.export(g.ID)) })
	// The node's other spaces (its account's) are opened too, and b
	// refuses them: only g's session is asked to be live.
	st := a.peers.Status()
	if len(st) != 1 {
		t.Fatalf("status: %+v", st)
	}
	i := slices.IndexFunc(st[0].Sessions, func(s peers.SessionStatus) bool { return s.Space == g.ID })
	if i < 0 || st[0].Sessions[i].Phase != peers.PhaseLive {
		t.Fatalf("status: %+v", st)
	}
}
