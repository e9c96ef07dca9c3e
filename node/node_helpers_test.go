package node_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 9, 26, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// testNode is a node with the account key in a temporary directory.
type testNode struct {
	*node.Node
	t       testing.TB
	dir     string
	account *identity.PrivateKey
	clock   *fakeClock
}

// newNode opens a node with a new account key on memory: (or the store o
// names), with a fake clock.
func newNode(t testing.TB, o *node.Options) *testNode {
	t.Helper()
	acc, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	tn := &testNode{t: t, dir: t.TempDir(), account: acc, clock: newClock()}
	tn.open(o)
	return tn
}

func (tn *testNode) options(o *node.Options) *node.Options {
	var oo node.Options
	if o != nil {
		oo = *o
	}
	if oo.Dir == "" {
		oo.Dir = tn.dir
	}
	if oo.Store == "" {
		oo.Store = "pebble:" + filepath.Join(tn.dir, "store")
	}
	if oo.Account == nil && oo.AccountKey == "" {
		oo.Account = tn.account
	}
	if oo.Now == nil {
		oo.Now = tn.clock.Now
	}
	return &oo
}

func (tn *testNode) open(o *node.Options) {
	tn.t.Helper()
	n, err := node.Open(context.Background(), tn.options(o))
	if err != nil {
		tn.t.Fatal(err)
	}
	tn.Node = n
	tn.t.Cleanup(func() { n.Close() })
}

// reopen closes the node and opens it again on the same directory.
func (tn *testNode) reopen(o *node.Options) {
	tn.t.Helper()
	if err := tn.Close(); err != nil {
		tn.t.Fatal(err)
	}
	tn.open(o)
}

// space makes a public space with the given roles.
func (tn *testNode) space(name string, roles map[string][]space.Grant) *space.Genesis {
	tn.t.Helper()
	g, err := tn.CreateSpace(context.Background(), name, &node.CreateOptions{Roles: roles})
	if err != nil {
		tn.t.Fatal(err)
	}
	return g
}

func obj(pairs ...any) *canonical.Object { return canonical.NewObject(pairs...) }

// rings are key rings by space (node.Options.PassKeys).
type rings map[string]*seal.Keyring

func (r rings) Keyring(id string) *seal.Keyring { return r[id] }

// writerRoles are a space's roles where writers write records and admins
// manage the space.
var writerRoles = map[string][]space.Grant{
	"writer": {space.MustGrant("/record")},
	"admin":  {space.MustGrant(space.CmdSpace), space.MustGrant(space.CmdDefine), space.MustGrant("/record")},
}
