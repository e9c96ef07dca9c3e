package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/store"
	"github.com/minca-go/minca/transport"
)

// minca sync: one reconciliation of a store with a node, its summary, and
// exit 4 when the peer cannot be reached.
func TestSyncVerb(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	acc, _ := identity.GenerateKey()
	dir := t.TempDir()
	n, err := node.Open(ctx, &node.Options{Dir: dir, Store: "memory:", Account: acc})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	g, err := n.CreateSpace(ctx, "public", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := n.Put(ctx, g.ID, "app.notes", map[string]any{"n": i}, nil); err != nil {
			t.Fatal(err)
		}
	}
	p, err := peers.New(peers.NodeHost(n), &peers.Options{Transport: &transport.Options{Self: peers.NodeSelf(n)}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := p.Handler(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	mux := http.NewServeMux()
	mux.Handle(transport.PathPeer, srv)
	ln, err := transport.Listen("127.0.0.1:0", mux, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	su := "pebble:" + filepath.Join(t.TempDir(), "store")
	st, err := store.Open(ctx, su, &store.Options{Create: true, Judge: judge.NewSpaceJudge(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := judge.AddGenesis(ctx, st.Engine(), g); err != nil {
		t.Fatal(err)
	}
	st.Close()

	out, errs, code := minca(t, "", "sync", "--store", su, ln.URL(transport.PathPeer), g.ID)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var sum peers.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Received != 5 || sum.Sent != 0 || len(sum.Spaces) != 1 || sum.Spaces[0].Code != peers.CodeDone || sum.WireReceived == 0 {
		t.Fatalf("summary %s", out)
	}
	out, errs, code = minca(t, "", "sync", "--store", su, ln.URL(transport.PathPeer))
	if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum.Received != 0 {
		t.Fatalf("a second sync: exit %d, %s; stderr: %s", code, out, errs)
	}
	if _, errs, code = minca(t, "", "sync", "--store", su, "ws://127.0.0.1:1/minca"); code != exitUnreachable {
		t.Fatalf("an unreachable peer: exit %d: %s", code, errs)
	}
	if _, _, code = minca(t, "", "sync", "--store", su); code != exitUsage {
		t.Fatalf("no peer: exit %d", code)
	}
}
