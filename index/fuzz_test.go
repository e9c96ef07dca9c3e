package index_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/index"
)

// Parse never panics: it answers a Query or an *index.Error with a listed
// code; a query it answers runs (Find, Watch) without panicking, refused
// only with an *index.Error. Seeds in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"collection":"app.item","where":{"n":{"$gt":1}},"order":{"by":"s","dir":"desc"},"limit":3}`))
	w := newWorld(f, 11, memory.Open(nil))
	for range 40 {
		w.op()
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := index.Parse(data)
		if err != nil {
			var e *index.Error
			if !errors.As(err, &e) || !slices.Contains(index.Codes(), e.Code) {
				t.Fatalf("%q: %v", data, err)
			}
			return
		}
		for _, account := range []string{"", w.ws[0].Key.DID()} {
			p, err := w.ix.Find(ctx, w.space, q, account)
			var e *index.Error
			if err != nil && !errors.As(err, &e) {
				t.Fatalf("%q: %v", data, err)
			}
			if len(p.Entries) > q.Limit {
				t.Fatalf("%q: %d entries past the limit %d", data, len(p.Entries), q.Limit)
			}
			if l, err := w.ix.Watch(w.space, q, account); err == nil {
				l.Close()
			} else if !errors.As(err, &e) {
				t.Fatalf("%q: watch: %v", data, err)
			}
		}
	})
}
