package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/node"
)

// A running node deletes the files no version held whole names once they
// are past the file grace — a file a newer version stopped naming, an
// upload no write named — and keeps every file a held version names; a
// file kept within the grace stays.
func TestNodeTidiesFiles(t *testing.T) {
	ctx := context.Background()
	held := func(n *testNode, hash canonical.ID) bool {
		ok, err := n.Store().HasFile(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	// Within the grace (the default, 10 min): nothing goes.
	a := newNode(t, nil)
	g, err := a.CreateSpace(ctx, "album", &node.CreateOptions{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	up, err := a.PutFile(ctx, g.ID, noise(1000, 1))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := a.TidyFiles(ctx); err != nil || res.Deleted != 0 || !held(a, up.Hash) {
		t.Fatalf("an upload within the grace: %+v %v", res, err)
	}

	// Past it, with the node's own loop.
	b := newNode(t, &node.Options{FileGrace: 2 * time.Second, TidyFilesEvery: 50 * time.Millisecond})
	g, err = b.CreateSpace(ctx, "album", &node.CreateOptions{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	named, err := b.PutFile(ctx, g.ID, noise(70000, 2))
	if err != nil {
		t.Fatal(err)
	}
	dropped, err := b.PutFile(ctx, g.ID, noise(2000, 3))
	if err != nil {
		t.Fatal(err)
	}
	v := put(t, b, g.ID, "app.photo", obj("t", 1), &node.PutOptions{Files: []node.FileRef{named, dropped}})
	put(t, b, g.ID, "app.photo", obj("t", 2), &node.PutOptions{Key: v.Key, Files: []node.FileRef{named}})
	upload, err := b.PutFile(ctx, g.ID, noise(3000, 4))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for held(b, dropped.Hash) || held(b, upload.Hash) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s the node still holds the unnamed files: %v %v", held(b, dropped.Hash), held(b, upload.Hash))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !held(b, named.Hash) {
		t.Fatal("the node deleted a file its current version names")
	}
	if _, err := b.File(ctx, g.ID, named.Hash); err != nil {
		t.Fatal(err)
	}
}
