package peers_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

// tnode is a node with its peers, for tests.
type tnode struct {
	*node.Node
	t     testing.TB
	peers *peers.Peers
	topt  *transport.Options
}

func newNode(t testing.TB, po *peers.Options) *tnode {
	t.Helper()
	acc, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n, err := node.Open(context.Background(), &node.Options{Dir: dir, Store: "pebble:" + dir + "/store", Account: acc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	var o peers.Options
	if po != nil {
		o = *po
	}
	if o.Transport == nil {
		o.Transport = &transport.Options{}
	}
	topt := *o.Transport
	topt.Self = peers.NodeSelf(n)
	o.Transport = &topt
	if o.Reopen == 0 {
		o.Reopen = 50 * time.Millisecond
	}
	if o.Rescan == 0 {
		o.Rescan = 200 * time.Millisecond
	}
	p, err := peers.New(peers.NodeHost(n), &o)
	if err != nil {
		t.Fatal(err)
	}
	return &tnode{Node: n, t: t, peers: p, topt: p.TransportOptions()}
}

// shared makes a public space founded by every node's account, held by all.
func shared(t testing.TB, ns ...*tnode) *space.Genesis {
	t.Helper()
	var others []string
	for _, n := range ns[1:] {
		others = append(others, n.Account())
	}
	g, err := ns[0].CreateSpace(context.Background(), "shared", &node.CreateOptions{Founders: others})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns[1:] {
		if err := n.JoinGenesis(context.Background(), g); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func (n *tnode) put(spaceID, coll string, i int) {
	n.t.Helper()
	if _, err := n.Put(context.Background(), spaceID, coll, map[string]any{"text": fmt.Sprintf("note %d from %s", i, n.Account()[len(n.Account())-6:])}, nil); err != nil {
		n.t.Fatal(err)
	}
}

// export is what a node holds of a space, as it travels, sorted.
func (n *tnode) export(spaceID string) []string {
	n.t.Helper()
	var out []string
	for raw, err := range n.Store().ExportJSON(context.Background(), spaceID) {
		if err != nil {
			n.t.Fatal(err)
		}
		out = append(out, string(raw))
	}
	slices.Sort(out)
	return out
}

// pair connects a (opener) and b over an in-memory link, each served by
// its peers; both end with the test.
func pair(t testing.TB, a, b *tnode, f *transporttest.Faults) (*transport.Conn, *transport.Conn, *transporttest.Control) {
	t.Helper()
	return transporttest.Pair(t, a.topt, b.topt, f)
}

// eventually waits up to d for cond.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func canonicalDigest(id string) (canonical.ID, error) { return canonical.ParseID(id) }
