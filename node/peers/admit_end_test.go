package peers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/node/peers"
)

// A push that arrived whole is admitted though its connection ends right
// after it: the peer sent it and this end read it, so nothing of it is
// lost because the session that read it ended before the batch was
// checked and decided.
// mustID is the digest of a test's id text.
func mustID(id string) canonical.ID {
	d, err := canonical.ParseID(id)
	if err != nil {
		panic(err)
	}
	return d
}

func TestPushAdmittedThoughTheConnectionEnds(t *testing.T) {
	a, b := newNode(t, nil), newNode(t, nil)
	g := shared(t, a, b)
	for i := range 300 {
		a.put(g.ID, "app.notes", i)
	}
	var raws [][]byte
	var ids []string
	for v, err := range a.Store().Export(context.Background(), g.ID) {
		if err != nil {
			t.Fatal(err)
		}
		raw, err := v.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		raws, ids = append(raws, raw), append(ids, v.ID)
	}
	h := newHostile(t, b, nil)
	if err := h.send(negOpen(t, 1, g.ID, nil)); err != nil {
		t.Fatal(err)
	}
	h.until(tNegMsg, 1)
	if err := h.send(versions(2, 1, raws...)); err != nil {
		t.Fatal(err)
	}
	h.c.Close()
	eventually(t, 20*time.Second, "b holds every version of the push", func() bool {
		for _, id := range ids {
			if _, _, err := b.Store().Standing(context.Background(), mustID(id)); err != nil {
				return false
			}
		}
		return true
	})
}

// A node that stops serving first waits, a bounded while, for its peer to
// acknowledge what it pushed: versions written just before it stops reach
// the peer, and are held there once its Serve returns.
func TestServeStopWaitsForPushes(t *testing.T) {
	a, b := newNode(t, &peers.Options{DrainFor: 30 * time.Second}), newNode(t, nil)
	g := shared(t, a, b)
	ca, cb, _ := pair(t, a, b, nil)
	go b.peers.Serve(context.Background(), cb, false, "accept")
	actx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan struct{})
	go func() { a.peers.Serve(actx, ca, true, "dial"); close(served) }()
	a.put(g.ID, "app.notes", -1)
	eventually(t, 20*time.Second, "a and b in sync", func() bool { return converged([]*tnode{a, b}, g.ID) })
	var ids []string
	for i := range 200 {
		v, err := a.Put(context.Background(), g.ID, "app.notes", map[string]any{"text": fmt.Sprint("note ", i)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v.ID)
	}
	stop()
	<-served
	for _, id := range ids {
		if _, _, err := b.Store().Standing(context.Background(), mustID(id)); err != nil {
			t.Fatalf("a stopped serving and b does not hold %s, written before: %v", id, err)
		}
	}
}
