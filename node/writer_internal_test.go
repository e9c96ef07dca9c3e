package node

import (
	"testing"
	"time"
)

func gatherWriter(maxBatch int, wait time.Duration) *writer {
	return &writer{n: &Node{o: Options{MaxBatch: maxBatch}}, q: make(chan *writeReq, 64), wait: wait}
}

func queue(w *writer, rs ...*writeReq) {
	for _, r := range rs {
		w.q <- r
	}
}

func reqs(n int) []*writeReq {
	out := make([]*writeReq, n)
	for i := range out {
		out[i] = &writeReq{key: string(rune('a' + i))}
	}
	return out
}

func TestGatherTakesWhatIsQueued(t *testing.T) {
	w := gatherWriter(256, time.Hour)
	rs := reqs(6)
	queue(w, rs[1:]...)
	batch, held := w.gather(rs[0], 1)
	if len(batch) != 6 || held != nil {
		t.Fatalf("batch of %d (held %v), want the 6 queued", len(batch), held)
	}
	for i, r := range batch {
		if r != rs[i] {
			t.Fatalf("batch[%d] is not the write queued %d-th", i, i)
		}
	}
}

func TestGatherStopsAtMaxBatch(t *testing.T) {
	w := gatherWriter(8, time.Hour)
	rs := reqs(20)
	queue(w, rs[1:]...)
	batch, _ := w.gather(rs[0], 20)
	if len(batch) != 8 || len(w.q) != 12 {
		t.Fatalf("batch of %d with %d left queued, want 8 and 12", len(batch), len(w.q))
	}
}

// The writers the last batch answered come back one by one: the batch
// waits for as many as it had, not only for those already queued.
func TestGatherWaitsForTheLastBatchsWriters(t *testing.T) {
	w := gatherWriter(256, time.Hour)
	rs := reqs(4)
	go func() {
		for _, r := range rs[1:] {
			time.Sleep(time.Millisecond)
			w.q <- r
		}
	}()
	batch, _ := w.gather(rs[0], 4)
	if len(batch) != 4 {
		t.Fatalf("batch of %d, want the 4 the last batch had", len(batch))
	}
}

func TestGatherGivesUpWaiting(t *testing.T) {
	w := gatherWriter(256, time.Millisecond)
	rs := reqs(2)
	queue(w, rs[1])
	batch, _ := w.gather(rs[0], 64)
	if len(batch) != 2 {
		t.Fatalf("batch of %d, want the 2 there were", len(batch))
	}
}

func TestGatherLeavesAnAccessChangeForItsOwnBatch(t *testing.T) {
	w := gatherWriter(256, time.Hour)
	rs := reqs(5)
	rs[3].access = true
	queue(w, rs[1:]...)
	batch, held := w.gather(rs[0], 1)
	if len(batch) != 3 || held != rs[3] {
		t.Fatalf("batch of %d, held %v: want the 3 before the access change, and it held", len(batch), held)
	}
	batch, held = w.gather(held, 3)
	if len(batch) != 1 || held != nil {
		t.Fatalf("an access change gathered %d writes (held %v), want it alone", len(batch), held)
	}
}

func TestGatherEndsWhenTheQueueCloses(t *testing.T) {
	w := gatherWriter(256, time.Hour)
	rs := reqs(2)
	queue(w, rs[1])
	close(w.q)
	if batch, _ := w.gather(rs[0], 64); len(batch) != 2 {
		t.Fatalf("batch of %d, want the 2 queued before the close", len(batch))
	}
}
