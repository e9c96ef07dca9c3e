package index_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/internal/race"
)

var allOps = []string{"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$contains"}

var attrs = []string{"n", "s", "b", "arr", "o", "o.x", "nope", "@key", "@collection", "@createdBy", "@createdAt",
	"link:about", "link:in", "@tags"}

// operand draws an operand for name from the records' own values.
func (w *world) operand(name string) any {
	switch {
	case name == "@key" || strings.HasPrefix(name, "link:"):
		if len(w.recs) > 0 && w.r.IntN(5) > 0 {
			return w.recs[w.r.IntN(len(w.recs))].key
		}
		return words[w.r.IntN(len(words))]
	case name == "@collection":
		return []string{"app.item", "app.other", "app"}[w.r.IntN(3)]
	case name == "@createdBy":
		if w.r.IntN(3) == 0 {
			return "$me"
		}
		return w.ws[w.r.IntN(len(w.ws))].Key.DID()
	case name == "@createdAt":
		if len(w.recs) > 0 {
			return w.recs[w.r.IntN(len(w.recs))].first.CreatedAt
		}
		return "2026-09-26T12:00:00.000Z"
	case name == "@tags":
		return tagSet[w.r.IntN(len(tagSet))]
	}
	return w.value(0)
}

// condition draws an operator object (or a bare value) for name.
func (w *world) condition(name string) any {
	ops := allOps
	switch {
	case strings.HasPrefix(name, "link:") || name == "@tags":
		ops = []string{"$eq", "$ne", "$in", "$nin", "$exists", "$contains"}
	case name == "@createdAt":
		ops = allOps[:9]
	}
	if w.r.IntN(5) == 0 && name != "@createdAt" {
		v := w.operand(name)
		if _, isArr := v.([]any); !isArr {
			return v // a bare value: $eq
		}
	}
	m := map[string]any{}
	for range 1 + w.r.IntN(2) {
		op := ops[w.r.IntN(len(ops))]
		switch op {
		case "$exists":
			m[op] = w.r.IntN(2) == 0
		case "$in", "$nin":
			l := make([]any, w.r.IntN(4))
			for i := range l {
				l[i] = w.operand(name)
			}
			m[op] = l
		case "$gt", "$gte", "$lt", "$lte":
			v := w.operand(name)
			for name[0] != '@' {
				if _, ok := v.(float64); ok {
					break
				}
				if _, ok := v.(string); ok {
					break
				}
				v = w.operand(name)
			}
			if v == "$me" {
				v = "a"
			}
			m[op] = v
		default:
			m[op] = w.operand(name)
		}
	}
	return m
}

func (w *world) filter(depth int) map[string]any {
	f := map[string]any{}
	for range 1 + w.r.IntN(3) {
		switch k := w.r.IntN(10); {
		case depth < 3 && k == 0:
			l := make([]any, 1+w.r.IntN(3))
			for i := range l {
				l[i] = w.filter(depth + 1)
			}
			f[[]string{"$and", "$or"}[w.r.IntN(2)]] = l
		case depth < 3 && k == 1:
			f["$not"] = w.filter(depth + 1)
		default:
			name := attrs[w.r.IntN(len(attrs))]
			f[name] = w.condition(name)
		}
	}
	return f
}

// query draws a query: its JSON members, and what the reference needs.
type randomQuery struct {
	coll  string
	where map[string]any
	by    string
	desc  bool
	limit int
}

func (w *world) query() randomQuery {
	q := randomQuery{coll: "app.item", by: "@createdAt", limit: 1 + w.r.IntN(7)}
	if w.r.IntN(6) == 0 {
		q.coll = "app.other"
	}
	if w.r.IntN(5) > 0 {
		q.where = w.filter(1)
	}
	q.by = []string{"@createdAt", "@key", "n", "s", "o.x", "b", "arr", "o"}[w.r.IntN(8)]
	q.desc = w.r.IntN(2) == 0
	return q
}

func (q randomQuery) json(cursor string) []byte {
	m := map[string]any{"collection": q.coll, "limit": q.limit, "order": map[string]any{"by": q.by, "dir": map[bool]string{false: "asc", true: "desc"}[q.desc]}}
	if q.where != nil {
		m["where"] = q.where
	}
	if cursor != "" {
		m["cursor"] = cursor
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func ids(ds []*refDoc) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.key
	}
	return out
}

// page runs one page of q after cursor.
func (w *world) page(q randomQuery, cursor, account string) index.Page {
	w.t.Helper()
	pq, err := index.Parse(q.json(cursor))
	if err != nil {
		w.t.Fatalf("%s: %v", q.json(cursor), err)
	}
	p, err := w.ix.Find(ctx, w.space, pq, account)
	if err != nil {
		w.t.Fatalf("%s: %v", q.json(cursor), err)
	}
	// Scan hands out the same entries, and the same next.
	var rows []index.Entry
	next, err := w.ix.Scan(ctx, w.space, pq, account, func(r index.Row) bool {
		e := r.Entry()
		if string(e.JSON) != string(r.JSON()) {
			w.t.Fatal("a row's JSON is not its entry's")
		}
		e.JSON = slices.Clone(e.JSON)
		rows = append(rows, e)
		return true
	})
	if err != nil || next != p.Next || !slices.EqualFunc(rows, p.Entries, func(a, b index.Entry) bool {
		return a.Key == b.Key && a.ID == b.ID && a.CreatedBy == b.CreatedBy && a.CreatedAt.Equal(b.CreatedAt) && string(a.JSON) == string(b.JSON)
	}) {
		w.t.Fatalf("%s: Scan differs from Find (%v)", q.json(cursor), err)
	}
	if len(p.Entries) > 1 {
		n := 0
		next, err := w.ix.Scan(ctx, w.space, pq, account, func(index.Row) bool { n++; return false })
		if err != nil || n != 1 || next != "" {
			w.t.Fatalf("a Scan stopped at once: %d rows, next %q, %v", n, next, err)
		}
	}
	return p
}

// Every operator, on every attribute, in every order, paged: all pages
// together are the reference evaluator's sorted result, exactly. Six seeds
// of 250 queries; three of 120 under -short or -race.
func TestQueriesMatchTheReference(t *testing.T) {
	seeds, queries := 6, 250
	if testing.Short() || race.Enabled {
		seeds, queries = 3, 120
	}
	for seed := range uint64(seeds) {
		// Every other store cannot iterate backwards: descending pages
		// then go through the heap.
		var kv engine.KV = memory.Open(nil)
		if seed%2 == 1 {
			kv = forwardOnly{kv}
		}
		w := newWorld(t, seed+1, kv)
		for range 150 {
			w.op()
		}
		cur := w.current()
		account := w.ws[0].Key.DID()
		nonEmpty := 0
		for range queries {
			q := w.query()
			want := refQuery(cur, q.coll, q.where, q.by, q.desc, account)
			if len(want) > 0 {
				nonEmpty++
			}
			var got []string
			cursor := ""
			for pages := 0; ; pages++ {
				p := w.page(q, cursor, account)
				for _, e := range p.Entries {
					got = append(got, e.Key)
					if d := cur[e.Key]; d == nil || d.id != e.ID || string(d.json) != string(e.JSON) {
						t.Fatalf("%s: entry %s is not the record's current version", q.json(cursor), e.Key)
					}
				}
				if len(p.Entries) > q.limit || (len(p.Entries) < q.limit) != (p.Next == "") {
					t.Fatalf("%s: page of %d, next %q", q.json(cursor), len(p.Entries), p.Next)
				}
				if p.Next == "" {
					break
				}
				if pages > len(want)+2 {
					t.Fatalf("%s: pages never end", q.json(""))
				}
				cursor = p.Next
			}
			if !slices.Equal(got, ids(want)) {
				t.Fatalf("seed %d, %s:\n got %q\nwant %q", seed, q.json(""), got, ids(want))
			}
		}
		if nonEmpty < queries/4 {
			t.Fatalf("only %d of %d queries had a result: the test's domain matches too little", nonEmpty, queries)
		}
	}
}

// Paging while records change: each page is exactly the reference's
// result at the time, from just after the previous page's last entry.
func TestPagingWhileWriting(t *testing.T) {
	for seed := range uint64(4) {
		var kv engine.KV = memory.Open(nil)
		if seed%2 == 1 {
			kv = forwardOnly{kv}
		}
		w := newWorld(t, seed+100, kv)
		for range 100 {
			w.op()
		}
		account := w.ws[1].Key.DID()
		for range 60 {
			q := w.query()
			var prev *refDoc // the last entry returned, as it was then
			cursor := ""
			for pages := 0; pages < 50; pages++ {
				cur := w.current()
				all := refQuery(cur, q.coll, q.where, q.by, q.desc, account)
				var want []*refDoc
				for _, d := range all {
					c := 1
					if prev != nil {
						c = refCompare(q.by, d, prev)
						if q.desc {
							c = -c
						}
					}
					if c > 0 && len(want) < q.limit {
						want = append(want, d)
					}
				}
				p := w.page(q, cursor, account)
				var got []string
				for _, e := range p.Entries {
					got = append(got, e.Key)
				}
				if !slices.Equal(got, ids(want)) {
					t.Fatalf("seed %d page %d of %s:\n got %q\nwant %q", seed, pages, q.json(cursor), got, ids(want))
				}
				if p.Next == "" {
					break
				}
				prev, cursor = want[len(want)-1], p.Next
				for range w.r.IntN(3) {
					w.op()
				}
			}
		}
	}
}

func TestReferenceSeesEveryOperator(t *testing.T) {
	// The generator must reach every operator on every kind of attribute,
	// or the property tests prove less than they claim.
	w := newWorld(t, 9, memory.Open(nil))
	for range 20 {
		w.op()
	}
	seen := map[string]bool{}
	var walk func(f map[string]any)
	walk = func(f map[string]any) {
		for k, v := range f {
			switch k {
			case "$and", "$or":
				for _, g := range v.([]any) {
					walk(g.(map[string]any))
				}
			case "$not":
				walk(v.(map[string]any))
			default:
				if m, ok := v.(map[string]any); ok && k != "o" {
					for op := range m {
						seen[op] = true
					}
				}
				seen[k] = true
			}
		}
	}
	for range 400 {
		walk(w.filter(1))
	}
	for _, want := range append(append([]string{}, allOps...), attrs...) {
		if !seen[want] {
			t.Errorf("the generator never makes %s", want)
		}
	}
	_ = fmt.Sprint()
}

// forwardOnly hides a KV's optional abilities (engine.ReverseReader).
type forwardOnly struct{ engine.KV }
