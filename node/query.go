package node

import (
	"context"
	"encoding/json"
	"errors"
)

// Querier answers queries over a space's readable current versions in the
// format of 06 §2.11 ({collection, where?, order?, limit?, cursor?}), with
// "$me" standing for the account. The index package provides one; the
// node hands it what the API receives as it is. A malformed query is a
// *QueryError.
type Querier interface {
	Query(ctx context.Context, space string, q json.RawMessage, me string) (QueryPage, error)
	// Watch starts a live query: the changes of its result as they are
	// committed, in commit order.
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
// result.
type QueryChange struct {
	Kind  string          `json:"kind"` // "enter", "change", "leave"
	Entry json.RawMessage `json:"entry"`
}

// QueryError is a malformed query: the path of the bad member and why.
type QueryError struct {
	Code    string
	Path    string
	Message string
}

func (e *QueryError) Error() string { return e.Code + " at " + e.Path + ": " + e.Message }

// ErrNoQueries: the node was opened without a Querier.
var ErrNoQueries = errors.New("minca/node: this node answers no queries (it has no index)")

// Query answers a query in a space through the node's Querier.
func (n *Node) Query(ctx context.Context, space string, q json.RawMessage) (QueryPage, error) {
	if n.o.Querier == nil {
		return QueryPage{}, ErrNoQueries
	}
	return n.o.Querier.Query(ctx, space, q, n.Account())
}

// WatchQuery starts a live query through the node's Querier.
func (n *Node) WatchQuery(ctx context.Context, space string, q json.RawMessage) (LiveQuery, error) {
	if n.o.Querier == nil {
		return nil, ErrNoQueries
	}
	return n.o.Querier.Watch(ctx, space, q, n.Account())
}
