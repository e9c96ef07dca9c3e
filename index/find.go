package index

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/minca-go/minca/engine"
)

// Entry is one record in a query's result: its readable current version
// (02 §9.5) with what the index knows of its creation.
type Entry struct {
	Key string
	ID  string
	// CreatedAt and CreatedBy are @createdAt and @createdBy (zero and ""
	// when not known: the record's first version is not held, or its
	// createdAt does not parse).
	CreatedAt time.Time
	CreatedBy string
	// JSON is the version as canonical JSON, whole (what
	// engine.Store.CurrentJSON returns). It belongs to the caller.
	JSON []byte
}

func (d *doc) entry() Entry {
	d.texts()
	e := Entry{Key: d.key, ID: d.id, CreatedBy: d.createdBy, JSON: d.json}
	if ms, ok := d.createdAt(); ok {
		e.CreatedAt = time.UnixMilli(ms).UTC()
	}
	if e.JSON == nil && d.content != nil && d.v != nil {
		e.JSON, _ = d.v.MarshalJSON()
	}
	return e
}

// Page is a page of a query's result, in the query's order.
type Page struct {
	Entries []Entry
	// Next is the cursor of the page after this one, when this one is
	// full (it may be empty); "" when this page is the last.
	Next string
}

// Find answers a query in one space: the first page after q.Cursor of
// the records whose readable current version (02 §9.5) is in
// q.Collection, is not a delete, and passes q's filter, with "$me" standing
// for account. docs/queries.md says what each operator means and how
// entries are ordered. Each record is read as of a whole batch; a batch
// committing while a page is read may be seen in part of it.
func (ix *Index) Find(ctx context.Context, space string, q *Query, account string) (Page, error) {
	p := Page{Entries: make([]Entry, 0, min(q.Limit, 128))}
	next, err := ix.scan(ctx, space, q, account, func(d *doc) bool {
		e := d.entry()
		// One small allocation each, of the exact size: no large block
		// to clear and to fault in, page after page.
		e.JSON = bytes.Clone(e.JSON)
		p.Entries = append(p.Entries, e)
		return true
	})
	p.Next = next
	return p, err
}

// Scan is [Index.Find] handing each entry to fn as it is read, in order,
// instead of gathering a page: a server writes a page out from there
// without copying it. What fn is given is valid only during the call. fn
// returns false to stop: the page then ends there, with no next. It
// returns the page's next.
func (ix *Index) Scan(ctx context.Context, space string, q *Query, account string, fn func(Row) bool) (next string, err error) {
	return ix.scan(ctx, space, q, account, func(d *doc) bool { return fn(Row{d}) })
}

// Row is an entry of a page as [Index.Scan] hands it out: valid only
// during the call.
type Row struct{ d *doc }

// JSON is the version as canonical JSON, valid only during the call.
func (r Row) JSON() []byte { return r.d.json }

// Entry is the entry; its JSON too is valid only during the call.
func (r Row) Entry() Entry { return r.d.entry() }

// scan runs a page, handing each entry to emit.
func (ix *Index) scan(ctx context.Context, space string, q *Query, account string, emit func(*doc) bool) (string, error) {
	st, err := ix.store()
	if err != nil {
		return "", err
	}
	if space == "" {
		return "", refuse(CodeSpace, "", "a query is answered in one space, and none was named")
	}
	b, err := q.bind(account)
	if err != nil {
		return "", err
	}
	var after []byte
	if q.Cursor != "" {
		fp, pos, err := decodeCursor(q.Cursor)
		if err != nil {
			return "", refuse(CodeCursor, "cursor", err.Error())
		}
		if fp != b.fp {
			return "", refuse(CodeCursorQuery, "cursor", "the cursor is of another query (its collection, where, order or account differ)")
		}
		after = pos
	}
	kv := st.IndexReader()
	g, ok := kv.(manyGetter)
	if !ok {
		return "", errors.New("minca/index: the store's index reader cannot look keys up in a sorted run")
	}
	r := &runner{ix: ix, kv: kv, g: g, space: space, q: b, after: after, emit: emit}
	if err := r.run(ctx); err != nil {
		return "", err
	}
	if r.n < q.Limit || r.stopped {
		return "", nil
	}
	return encodeCursor(b.fp, r.last), nil
}

// runner answers one page.
type runner struct {
	ix *Index
	kv engine.Reader
	g  manyGetter // kv's sorted look-ups
	// rest is the filter but for the condition the streams read only the
	// records of (a point condition); an entry of those streams whose
	// version is still the record's is matched against rest alone.
	rest    *node
	space   string
	q       *bound
	after   []byte // the cursor's position; nil for the first page
	place   []byte // the space's and collection's part of keys (placeOf)
	pp      []byte // the collection's primary prefix
	arena   arena
	scratch doc
	// emit takes each entry of the page in order; a doc's bytes may be
	// the iterator's, valid only during the call.
	emit    func(*doc) bool
	n       int    // entries emitted
	last    []byte // the position of the last entry emitted
	stopped bool   // emit returned false
}

// give emits d at position pos; false when the page is done.
func (r *runner) give(d *doc, pos []byte) bool {
	r.n++
	if r.n == r.q.Limit { // the page is full: its next starts after pos
		r.last = append(r.last[:0], pos...)
	}
	if !r.emit(d) {
		r.stopped = true
		return false
	}
	return r.n < r.q.Limit
}
