package index_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/judge"
)

// inResult is the reference's result of a query as key → current id.
func (w *world) inResult(where map[string]any, account string) map[string]string {
	out := map[string]string{}
	for _, d := range refQuery(w.current(), "app.item", where, "@key", false, account) {
		out[d.key] = d.id
	}
	return out
}

func next(t *testing.T, l *index.Live) (index.LiveChange, bool) {
	t.Helper()
	select {
	case c, ok := <-l.Changes():
		return c, ok
	case <-time.After(time.Minute):
		t.Fatal("no change arrived")
	}
	return index.LiveChange{}, false
}

// A live query delivers each record entering, changing in and leaving its
// result, in commit order, each once: what the reference's results before
// and after each write say.
func TestLiveQueryEnterChangeLeave(t *testing.T) {
	w := newWorld(t, 21, memory.Open(nil))
	for range 20 {
		w.op()
	}
	account := w.ws[0].Key.DID()
	where := map[string]any{"$or": []any{map[string]any{"n": map[string]any{"$gte": 0.0}}, map[string]any{"@createdBy": "$me"}}}
	q, err := index.Parse(randomQuery{coll: "app.item", where: where}.liveJSON())
	if err != nil {
		t.Fatal(err)
	}
	l, err := w.ix.Watch(w.space, q, account)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		kind    index.LiveKind
		key, id string
	}
	var want []ev
	before := w.inResult(where, account)
	kinds := map[index.LiveKind]int{}
	for range 200 {
		key := w.op()
		after := w.inResult(where, account)
		was, is := before[key], after[key]
		switch {
		case was == "" && is != "":
			want = append(want, ev{index.Enter, key, is})
		case was != "" && is != "" && was != is:
			want = append(want, ev{index.Changed, key, is})
		case was != "" && is == "":
			want = append(want, ev{index.Leave, key, was})
		}
		before = after
	}
	// A marker that enters last: once it arrives, everything before has.
	m, err := w.ws[0].First("app.item", canonical.NewObject("n", 1.0))
	if err != nil {
		t.Fatal(err)
	}
	w.admit(m)
	want = append(want, ev{index.Enter, m.Key, m.ID})
	var got []ev
	for len(got) < len(want) {
		c, ok := next(t, l)
		if !ok {
			t.Fatalf("ended: %v", l.Err())
		}
		got = append(got, ev{c.Kind, c.Entry.Key, c.Entry.ID})
		kinds[c.Kind]++
		if c.Entry.ID != "" && len(c.Entry.JSON) == 0 {
			t.Fatal("a change without its version")
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("live changes\n got %v\nwant %v", got, want)
	}
	if kinds[index.Enter] == 0 || kinds[index.Changed] == 0 || kinds[index.Leave] == 0 {
		t.Fatalf("the writes made too few kinds of change: %v", kinds)
	}
	select {
	case c := <-l.Changes():
		t.Fatalf("a change past the marker: %+v", c)
	default:
	}
	l.Close()
	if _, ok := <-l.Changes(); ok || l.Err() != nil {
		t.Fatalf("after Close: %v", l.Err())
	}
}

func (q randomQuery) liveJSON() []byte {
	q2 := q
	b := q2.json("")
	// Drop order and limit: a live query has none.
	v, _ := canonical.Parse(b)
	o := v.(*canonical.Object)
	o.Delete("order")
	o.Delete("limit")
	out, _ := canonical.Marshal(o)
	return out
}

// A reader that does not keep up is dropped with a clear reason, and the
// writes go on.
func TestSlowLiveQueryDropped(t *testing.T) {
	st, ix, err := index.Open(memory.Open(nil), &engine.Options{Judge: &judge.Judge{}}, &index.Options{LiveBuffer: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := &world{t: t, st: st, ix: ix}
	w0 := newWorld(t, 5, memory.Open(nil))
	w.space, w.ws, w.r = w0.space, w0.ws, w0.r
	q, _ := index.Parse([]byte(`{"collection":"app.item"}`))
	slow, err := ix.Watch(w.space, q, "")
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		w.op()
	}
	for deadline := time.Now().Add(time.Minute); slow.Err() == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a reader that never reads was not dropped")
		}
	}
	n := 0
	for {
		_, ok := next(t, slow)
		if !ok {
			break
		}
		n++
	}
	if n != 2 || !errors.Is(slow.Err(), index.ErrSlow) {
		t.Fatalf("got %d changes, then %v", n, slow.Err())
	}
	// The store closing ends the live queries.
	l, err := ix.Watch(w.space, q, "")
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	for { // changes committed just before Watch may come first
		if _, ok := next(t, l); !ok {
			break
		}
	}
	if !errors.Is(l.Err(), engine.ErrClosed) {
		t.Fatalf("after the store closed: %v", l.Err())
	}
}

// Writes, pages and live queries at once (run with -race).
func TestConcurrentFindWatchWrite(t *testing.T) {
	w := newWorld(t, 31, memory.Open(nil))
	for range 20 {
		w.op()
	}
	q, _ := index.Parse([]byte(`{"collection":"app.item","where":{"n":{"$gte":0}},"limit":3}`))
	lq, _ := index.Parse([]byte(`{"collection":"app.item","where":{"n":{"$gte":0}}}`))
	l, err := w.ix.Watch(w.space, lq, "")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-l.Changes():
			case <-done:
				return
			}
		}
	}()
	for range 2 {
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				p, err := w.ix.Find(ctx, w.space, q, "")
				for err == nil && p.Next != "" {
					q2, _ := index.Parse([]byte(`{"collection":"app.item","where":{"n":{"$gte":0}},"limit":3,"cursor":"` + p.Next + `"}`))
					p, err = w.ix.Find(ctx, w.space, q2, "")
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 100 {
		w.op()
	}
	close(done)
	wg.Wait()
	l.Close()
}

// Close ends the live queries before it returns: each one's channel is
// closed and its Err says why, with nothing left running to end it later.
func TestIndexCloseEndsLiveQueries(t *testing.T) {
	w := newWorld(t, 41, memory.Open(nil))
	for range 5 {
		w.op()
	}
	q, err := index.Parse([]byte(`{"collection":"app.item","where":{"n":{"$gte":0}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var ls []*index.Live
	for range 3 {
		l, err := w.ix.Watch(w.space, q, "")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	w.ix.Close()
	for i, l := range ls {
		select {
		case _, ok := <-l.Changes():
			if ok {
				t.Fatalf("live query %d: a change after Close", i)
			}
		default:
			t.Fatalf("live query %d still open when Close returned", i)
		}
		if !errors.Is(l.Err(), engine.ErrClosed) {
			t.Fatalf("live query %d ended with %v, want ErrClosed", i, l.Err())
		}
	}
}
