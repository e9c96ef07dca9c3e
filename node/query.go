package node

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/judge"
)

// Querier answers queries over a space's readable current versions in the
// format of 06 §2.11 ({collection, where?, order?, limit?, cursor?};
// docs/queries.md), with "$me" standing for the account. The node's own is
// its index (package index, kept in the store's write batches); the node
// hands it what the API receives as it is. A malformed query is an
// *index.Error (errors.Is(err, index.ErrMalformed)) naming the bad member.
type Querier interface {
	Query(ctx context.Context, space string, q json.RawMessage, me string) (QueryPage, error)
	// Watch starts a live query ({collection, where?}): the changes of
	// its result as they are committed, in commit order, until ctx ends or
	// it is closed.
	Watch(ctx context.Context, space string, q json.RawMessage, me string) (LiveQuery, error)
}

// QueryPage is a page of a query's result: the versions, whole, in the
// query's order, and the cursor of the next page ("" after the last).
type QueryPage struct {
	Entries []json.RawMessage `json:"entries"`
	Next    string            `json:"next"`
}

// LiveQuery is a live query's changes; Changes is closed when it ends,
// and Err says why (nil after Close).
type LiveQuery interface {
	Changes() <-chan QueryChange
	Err() error
	Close()
}

// QueryChange is a record entering, changing in or leaving a live query's
// result: Entry is its current version (enter, change) or the version
// that left (leave).
type QueryChange struct {
	Kind  string          `json:"kind"` // "enter", "change", "leave"
	Entry json.RawMessage `json:"entry"`
}

// Query answers a query in a space the node keeps, "$me" standing for its
// account.
func (n *Node) Query(ctx context.Context, space string, q json.RawMessage) (QueryPage, error) {
	if err := n.keeps(ctx, space); err != nil {
		return QueryPage{}, err
	}
	return n.q.Query(ctx, space, q, n.Account())
}

// WatchQuery starts a live query in a space the node keeps; it ends when
// ctx does, when it is closed, or when the node closes.
func (n *Node) WatchQuery(ctx context.Context, space string, q json.RawMessage) (LiveQuery, error) {
	if err := n.keeps(ctx, space); err != nil {
		return nil, err
	}
	return n.q.Watch(ctx, space, q, n.Account())
}

// keeps refuses a space whose genesis the node does not hold, so that a
// query there says so rather than answer nothing.
func (n *Node) keeps(ctx context.Context, space string) error {
	_, ok, err := judge.GenesisOf(ctx, n.st, space)
	if err != nil {
		return err
	}
	if !ok {
		return writeErr(CodeSpaceNotKept, "space", "the node does not keep the space "+space)
	}
	return nil
}

// indexQuerier is the node's Querier: its index, the query read from its
// JSON and the answer given as JSON.
type indexQuerier struct{ ix *index.Index }

// Query parses q and scans the page into one buffer, each entry a slice
// of it: one copy of each version, none per entry.
func (iq indexQuerier) Query(ctx context.Context, space string, q json.RawMessage, me string) (QueryPage, error) {
	pq, err := index.Parse(q)
	if err != nil {
		return QueryPage{}, err
	}
	var buf []byte
	var ends []int
	next, err := iq.ix.Scan(ctx, space, pq, me, func(r index.Row) bool {
		buf = append(buf, r.JSON()...)
		ends = append(ends, len(buf))
		return true
	})
	if err != nil {
		return QueryPage{}, err
	}
	p := QueryPage{Entries: make([]json.RawMessage, len(ends)), Next: next}
	start := 0
	for i, end := range ends {
		p.Entries[i] = buf[start:end:end]
		start = end
	}
	return p, nil
}

// Watch starts the index's live query and hands its changes on as JSON
// until ctx ends or it is closed.
func (iq indexQuerier) Watch(ctx context.Context, space string, q json.RawMessage, me string) (LiveQuery, error) {
	pq, err := index.Parse(q)
	if err != nil {
		return nil, err
	}
	l, err := iq.ix.Watch(space, pq, me)
	if err != nil {
		return nil, err
	}
	lq := &liveQuery{l: l, c: make(chan QueryChange), done: make(chan struct{})}
	stop := context.AfterFunc(ctx, lq.Close)
	go lq.run(stop)
	return lq, nil
}

// liveQuery is an index.Live seen as a LiveQuery. Its buffer is the
// index's (Options.LiveBuffer): a reader that falls behind is dropped
// there (index.ErrSlow), never blocking a write.
type liveQuery struct {
	l    *index.Live
	c    chan QueryChange
	done chan struct{}
	once sync.Once
}

func (lq *liveQuery) run(stop func() bool) {
	defer close(lq.c)
	defer stop()
	for ch := range lq.l.Changes() {
		select {
		case lq.c <- QueryChange{Kind: ch.Kind.String(), Entry: ch.Entry.JSON}:
		case <-lq.done:
			return
		}
	}
}

func (lq *liveQuery) Changes() <-chan QueryChange { return lq.c }

// Err is why the live query ended: nil after Close, index.ErrSlow or
// index.ErrBehind for a reader dropped, an error wrapping
// engine.ErrClosed when the node closed.
func (lq *liveQuery) Err() error { return lq.l.Err() }

func (lq *liveQuery) Close() {
	lq.once.Do(func() {
		close(lq.done)
		lq.l.Close()
	})
}
