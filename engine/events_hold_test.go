package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// A held subscription counts the batches with events of its space and
// sends none of their events; once no longer held it sends them again.
// Held and let go while batches commit beside, every batch is either
// counted or has its events sent, never both, never neither.
func TestSubscriptionHeldCountsEvents(t *testing.T) {
	ctx := context.Background()
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sp := enginetest.SpaceID("held")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	other := enginetest.SpaceID("held, another space")
	wo, err := enginetest.NewWriter(other)
	if err != nil {
		t.Fatal(err)
	}
	admit := func(w *enginetest.Writer, tag string) {
		v, err := w.First("app.notes", tag)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Admit(ctx, "p", []*record.Version{v}); err != nil {
			t.Fatal(err)
		}
	}
	sub := s.Subscribe(sp, 1<<14)
	defer sub.Close()
	// Each version of the space is two events (admitted, current).
	admit(w, "sent")
	if n := len(sub.Events()); n != 2 || sub.Passed() != 0 {
		t.Fatalf("not held: %d sent, %d counted; want 2, 0", n, sub.Passed())
	}
	sub.Hold(true)
	admit(w, "counted")
	admit(wo, "another space")
	admit(w, "counted too")
	if n := len(sub.Events()); n != 2 || sub.Passed() != 2 {
		t.Fatalf("held: %d sent, %d batches counted; want 2, 2", n, sub.Passed())
	}
	sub.Hold(false)
	admit(w, "sent again")
	if n := len(sub.Events()); n != 4 || sub.Passed() != 2 {
		t.Fatalf("let go: %d sent, %d batches counted; want 4, 2", n, sub.Passed())
	}

	// Held and let go while versions are admitted: what is sent and
	// what is counted add up to every batch, whatever the order.
	const n = 300
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range n {
			admit(w, fmt.Sprintf("beside %d", i))
		}
	}()
	for i := 0; i < 2*n; i++ {
		sub.Hold(i%2 == 0)
	}
	wg.Wait()
	// Two events a batch sent, one count a batch held.
	if sent, counted := int64(len(sub.Events())), sub.Passed(); sent%2 != 0 || sent/2+counted != n+4 || sub.Dropped() != 0 {
		t.Fatalf("%d events sent, %d batches counted (%d dropped); want %d batches in all", sent, counted, sub.Dropped(), n+4)
	}
}
