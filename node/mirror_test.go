package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/minca-go/minca/node"
)

// Mirrors run inside the node: what one node writes reaches another
// through a shared data folder while both run.
func TestMirrorsRunInsideTheNode(t *testing.T) {
	ctx := context.Background()
	folder := "folder:" + t.TempDir()
	a := newNode(t, &node.Options{Mirrors: []string{folder}})
	g := a.space("mirrored", nil)
	b := newNode(t, &node.Options{Mirrors: []string{folder}})
	if err := b.JoinGenesis(ctx, g); err != nil {
		t.Fatal(err)
	}
	v := put(t, a, g.ID, "app.note", obj("via", "folder"), nil)
	deadline := time.Now().Add(60 * time.Second)
	for {
		cur, err := b.Store().Current(ctx, g.ID, v.Key)
		if err == nil && cur.ID == v.ID {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the version did not reach the other node through the folder: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
