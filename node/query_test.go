package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
)

func query(t *testing.T, tn *testNode, sp, q string) node.QueryPage {
	t.Helper()
	p, err := tn.Query(context.Background(), sp, json.RawMessage(q))
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	return p
}

// pageIs checks a page's entries: each version as the store reads it,
// byte for byte, in order.
func pageIs(t *testing.T, tn *testNode, p node.QueryPage, want ...*record.Version) {
	t.Helper()
	if len(p.Entries) != len(want) {
		t.Fatalf("%d entries, want %d: %s", len(p.Entries), len(want), p.Entries)
	}
	for i, v := range want {
		cur, err := tn.Store().CurrentJSON(context.Background(), v.Space, v.Key)
		if err != nil || !bytes.Equal(p.Entries[i], cur) {
			t.Fatalf("entry %d is %s, want %s (%v)", i, p.Entries[i], cur, err)
		}
	}
}

// The node answers queries from its index, kept in the store's batches:
// pages by a cursor, "$me" its account, a where on a body field, one space
// only, and the same after the node is opened again.
func TestQueryThroughTheNodesIndex(t *testing.T) {
	tn := newNode(t, nil)
	g, other := tn.space("queried", nil), tn.space("other", nil)
	var vs []*record.Version
	for i := range 3 {
		vs = append(vs, put(t, tn, g.ID, "app.task", obj("n", float64(i), "done", i == 1), nil))
	}
	put(t, tn, other.ID, "app.task", obj("n", 9.0), nil)
	check := func() {
		p1 := query(t, tn, g.ID, `{"collection":"app.task","order":{"by":"n"},"limit":2}`)
		pageIs(t, tn, p1, vs[0], vs[1])
		if p1.Next == "" {
			t.Fatal("a full page has no next")
		}
		p2 := query(t, tn, g.ID, `{"collection":"app.task","order":{"by":"n"},"limit":2,"cursor":"`+p1.Next+`"}`)
		pageIs(t, tn, p2, vs[2])
		if p2.Next != "" {
			t.Fatalf("the last page's next is %q", p2.Next)
		}
		pageIs(t, tn, query(t, tn, g.ID, `{"collection":"app.task","where":{"done":true}}`), vs[1])
		pageIs(t, tn, query(t, tn, g.ID, `{"collection":"app.task","where":{"@createdBy":"$me"},"order":{"by":"n","dir":"desc"}}`), vs[2], vs[1], vs[0])
		pageIs(t, tn, query(t, tn, g.ID, `{"collection":"app.task","where":{"@createdBy":{"$ne":"$me"}}}`))
	}
	check()
	tn.reopen(nil)
	check()
}

func TestQueryRefusals(t *testing.T) {
	tn := newNode(t, nil)
	g := tn.space("refusals", nil)
	_, err := tn.Query(context.Background(), g.ID, json.RawMessage(`{"collection":"app.task","where":{"$and":[{"n":{"$gt":true}}]}}`))
	var qe *index.Error
	if !errors.As(err, &qe) || qe.Code != index.CodeOperand || qe.Path != "where.$and[0].n.$gt" {
		t.Fatalf("a malformed query: %v, want %s at where.$and[0].n.$gt", err, index.CodeOperand)
	}
	_, err = tn.Query(context.Background(), "bnotaspaceheld", json.RawMessage(`{"collection":"app.task"}`))
	wantCode(t, err, node.CodeSpaceNotKept)
	_, err = tn.WatchQuery(context.Background(), g.ID, json.RawMessage(`{"collection":"app.task","limit":3}`))
	if !errors.As(err, &qe) || qe.Code != index.CodeLive {
		t.Fatalf("a live query with a limit: %v", err)
	}
}

// A live query delivers a record entering and leaving its result, as
// versions, and ends when its context does (Err nil: not dropped).
func TestWatchQueryFollowsItsResultUntilItsContextEnds(t *testing.T) {
	tn := newNode(t, nil)
	g := tn.space("live", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lq, err := tn.WatchQuery(ctx, g.ID, json.RawMessage(`{"collection":"app.task","where":{"done":false}}`))
	if err != nil {
		t.Fatal(err)
	}
	next := func() node.QueryChange {
		t.Helper()
		select {
		case ch, ok := <-lq.Changes():
			if !ok {
				t.Fatalf("the live query ended: %v", lq.Err())
			}
			return ch
		case <-time.After(time.Minute):
			t.Fatal("no change in a minute")
		}
		return node.QueryChange{}
	}
	a := put(t, tn, g.ID, "app.task", obj("done", false), nil)
	put(t, tn, g.ID, "app.task", obj("done", true), nil) // never in the result
	put(t, tn, g.ID, "app.task", obj("done", true), &node.PutOptions{Key: a.Key})
	for _, want := range []string{"enter", "leave"} {
		ch := next()
		var v struct{ ID string }
		json.Unmarshal(ch.Entry, &v)
		if ch.Kind != want || v.ID != a.ID {
			t.Fatalf("got %s of %s, want %s of %s", ch.Kind, v.ID, want, a.ID)
		}
	}
	cancel()
	select {
	case ch, ok := <-lq.Changes():
		if ok {
			t.Fatalf("a change after the context ended: %+v", ch)
		}
	case <-time.After(time.Minute):
		t.Fatal("the live query did not end with its context")
	}
	if err := lq.Err(); err != nil {
		t.Fatalf("ended with its context: Err %v, want nil", err)
	}
}
