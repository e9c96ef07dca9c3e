package node_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
)

// 02 §4.2, §4.10: writers racing on one record — each write drafted on its
// own goroutine before it queues, all of them from the same top — still
// make one chain: every version follows the one before it, none is
// refused, and each takes the next place of the line. Fresh keys written
// beside them take the places between.
func TestConcurrentWritesToOneRecordChain(t *testing.T) {
	tn := newNode(t, nil)
	g := tn.space("race", nil)
	ctx := context.Background()
	const writers, each = 16, 5
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := tn.Put(ctx, g.ID, "app.note", obj("w", float64(w), "i", float64(i)), &node.PutOptions{Key: "settings"}); err != nil {
					errs <- fmt.Errorf("writer %d, write %d: %w", w, i, err)
				}
				if _, err := tn.Put(ctx, g.ID, "app.note", obj("fresh", float64(w)), nil); err != nil {
					errs <- fmt.Errorf("writer %d, fresh write %d: %w", w, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	key, err := record.ChosenKey(tn.account.DID(), "settings")
	if err != nil {
		t.Fatal(err)
	}
	hs, err := tn.History(ctx, g.ID, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != writers*each {
		t.Fatalf("%d versions of the record, want %d", len(hs), writers*each)
	}
	places := map[int64]bool{}
	for i, h := range hs { // newest first
		v := h.Version
		if h.Standing != engine.Stands || v.Seq != int64(len(hs)-1-i) {
			t.Fatalf("version %d: seq %d, %v", i, v.Seq, h.Standing)
		}
		if i+1 < len(hs) && v.Prev != hs[i+1].Version.ID {
			t.Fatalf("seq %d follows %s, not %s", v.Seq, v.Prev, hs[i+1].Version.ID)
		}
		if places[v.Log.N] {
			t.Fatalf("place %d given twice", v.Log.N)
		}
		places[v.Log.N] = true
	}
}
