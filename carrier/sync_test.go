package carrier_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

// The carrier over sync sessions (docs/sync.md §9): the home node, as the
// opener, syncs with the carrier (a peers.Host, showing no note) over an
// in-memory link. The carrier takes its carry space, learns from it the
// spaces it carries, and ends with the versions and standing the member
// holds in the private space.
func TestCarrierOverSyncSessions(t *testing.T) {
	s := newScene(t, nil)
	vs, _ := s.privateVersions()
	admitTo(t, s.home.Store(), vs)
	want := standings(t, s.home.Store(), vs)

	fast := func(o *peers.Options) *peers.Options {
		o.Reopen, o.Rescan = 50*time.Millisecond, 100*time.Millisecond
		return o
	}
	hp, err := peers.New(peers.NodeHost(s.home), fast(&peers.Options{Transport: &transport.Options{Self: peers.NodeSelf(s.home)}}))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := peers.New(s.c, fast(&peers.Options{Transport: &transport.Options{Self: s.c.Self()}}))
	if err != nil {
		t.Fatal(err)
	}
	ch, cc, _ := transporttest.Pair(t, hp.TransportOptions(), cp.TransportOptions(), nil)
	if ch.Peer().Root != "" || ch.Peer().DID != s.c.DID() {
		t.Fatalf("the home sees the carrier as %+v: want its key and no note", ch.Peer())
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go cp.Serve(sctx, cc, false, "accept")
	go hp.Serve(sctx, ch, true, "dial")

	deadline := time.Now().Add(20 * time.Second)
	for got := standings(t, s.c.Store(), vs); fmt.Sprint(got) != fmt.Sprint(want); got = standings(t, s.c.Store(), vs) {
		if time.Now().After(deadline) {
			t.Fatalf("the carrier holds\n%v\nthe member\n%v\ncarried %v", got, want, s.c.Carried())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
