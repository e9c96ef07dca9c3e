package index_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

var ctx = context.Background()

// backends the consistency tests run on.
var backends = map[string]func(t *testing.T) engine.KV{
	"memory": func(t *testing.T) engine.KV { return memory.Open(nil) },
	"pebble": func(t *testing.T) engine.KV {
		kv, err := pebble.Open(filepath.Join(t.TempDir(), "p"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return kv
	},
	"sqlite": func(t *testing.T) engine.KV {
		kv, err := sqlite.Open(filepath.Join(t.TempDir(), "s"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return kv
	},
}

// fields are the declared field indexes of the tests' collection.
var fields = map[string][]string{"app.item": {"n", "s", "o.x"}}

// rec is what the test knows of a record, apart from the store.
type rec struct {
	key       string
	w         *enginetest.Writer
	first     *record.Version
	top       *record.Version   // the latest version written
	versions  []*record.Version // every version written, in order
	withdrawn map[string]bool
}

// world is a space, a store with its index, and the records written, for
// random operations and a reference evaluator.
type world struct {
	t     testing.TB
	r     *rand.Rand
	space string
	ws    []*enginetest.Writer
	recs  []*rec
	st    *engine.Store
	ix    *index.Index
	kv    engine.KV
}

func newWorld(t testing.TB, seed uint64, kv engine.KV) *world {
	t.Helper()
	w := &world{t: t, r: rand.New(rand.NewPCG(seed, seed+7)), space: enginetest.SpaceID(fmt.Sprint("index ", seed)), kv: kv}
	for range 3 {
		wr, err := enginetest.NewWriter(w.space)
		if err != nil {
			t.Fatal(err)
		}
		w.ws = append(w.ws, wr)
	}
	st, ix, err := index.Open(kv, &engine.Options{Judge: &judge.Judge{}}, &index.Options{Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close(); st.Close() })
	w.st, w.ix = st, ix
	return w
}

// The value domain bodies and operands are drawn from: few enough that
// conditions match often.
var (
	words  = []string{"", "a", "ab", "b", "ba", "milk", "Milk", "a\u00e9", "\U0001f600"}
	tagSet = []string{"Hh5Cwzt8mQlIfYWE_cPjkA", "FfavMdkS1rv7FcKY9sNSoA", "x"}
	rels   = []string{"about", "in"}
)

func (w *world) scalar() any {
	switch w.r.IntN(7) {
	case 0:
		return nil
	case 1:
		return w.r.IntN(2) == 0
	case 2, 3:
		return float64(w.r.IntN(7) - 3)
	case 4:
		return float64(w.r.IntN(7)-3) + 0.5
	}
	return words[w.r.IntN(len(words))]
}

func (w *world) value(depth int) any {
	if depth > 1 {
		return w.scalar()
	}
	switch w.r.IntN(8) {
	case 0:
		n := w.r.IntN(3)
		a := make([]any, n)
		for i := range a {
			a[i] = w.value(depth + 1)
		}
		return a
	case 1:
		return map[string]any{"x": w.scalar()}
	}
	return w.scalar()
}

func (w *world) body() map[string]any {
	b := map[string]any{}
	for _, f := range []string{"n", "s", "b", "arr", "o"} {
		if w.r.IntN(5) == 0 {
			continue // absent
		}
		switch f {
		case "n":
			if w.r.IntN(6) == 0 {
				b[f] = w.value(0)
			} else {
				b[f] = float64(w.r.IntN(9) - 4)
			}
		case "s":
			b[f] = words[w.r.IntN(len(words))]
		case "b":
			b[f] = w.r.IntN(2) == 0
		case "arr":
			n := w.r.IntN(4)
			a := make([]any, n)
			for i := range a {
				a[i] = w.scalar()
			}
			b[f] = a
		case "o":
			b[f] = map[string]any{"x": w.scalar()}
		}
	}
	return b
}

// toCanonical turns a value of encoding/json's model into canonical's.
func toCanonical(v any) any {
	switch x := v.(type) {
	case map[string]any:
		o := &canonical.Object{}
		ks := make([]string, 0, len(x))
		for k := range x {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		for _, k := range ks {
			o.Members = append(o.Members, canonical.Member{Name: k, Value: toCanonical(x[k])})
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toCanonical(e)
		}
		return out
	}
	return v
}

func (w *world) extras() []enginetest.Opt {
	var links []any
	for range w.r.IntN(4) {
		if len(w.recs) == 0 {
			break
		}
		to := w.recs[w.r.IntN(len(w.recs))].key
		links = append(links, canonical.NewObject("rel", rels[w.r.IntN(len(rels))], "to", to))
	}
	var tags []any
	for range w.r.IntN(3) {
		tags = append(tags, tagSet[w.r.IntN(len(tagSet))])
	}
	var opts []enginetest.Opt
	if len(links) > 0 {
		opts = append(opts, func(o *canonical.Object) { o.Set("links", links) })
	}
	if len(tags) > 0 {
		opts = append(opts, func(o *canonical.Object) { o.Set("tags", tags) })
	}
	if w.r.IntN(4) == 0 {
		opts = append(opts, enginetest.Retain)
	}
	return opts
}

func (w *world) admit(v *record.Version) {
	w.t.Helper()
	outs, err := w.st.Admit(ctx, "test", []*record.Version{v})
	if err != nil {
		w.t.Fatal(err)
	}
	if outs[0].Verdict != engine.Stands {
		w.t.Fatalf("admit %s: %v %v", v.ID, outs[0].Verdict, outs[0].Refusal)
	}
}

// op makes one random change: a record created, edited, deleted, a
// version withdrawn or restored. It returns the key changed.
func (w *world) op() string {
	w.t.Helper()
	must := func(v *record.Version, err error) *record.Version {
		if err != nil {
			w.t.Fatal(err)
		}
		return v
	}
	k := w.r.IntN(10)
	if len(w.recs) < 4 || k < 3 {
		wr := w.ws[w.r.IntN(len(w.ws))]
		coll := "app.item"
		if w.r.IntN(5) == 0 {
			coll = "app.other"
		}
		v := must(wr.First(coll, toCanonical(w.body()), w.extras()...))
		w.admit(v)
		w.recs = append(w.recs, &rec{key: v.Key, w: wr, first: v, top: v, versions: []*record.Version{v}, withdrawn: map[string]bool{}})
		return v.Key
	}
	r := w.recs[w.r.IntN(len(w.recs))]
	switch {
	case k < 7:
		v := must(r.w.Next(r.top, toCanonical(w.body()), w.extras()...))
		w.admit(v)
		r.top, r.versions = v, append(r.versions, v)
	case k < 8:
		if r.top.Deleted {
			return w.op()
		}
		v := must(r.w.Delete(r.top))
		w.admit(v)
		r.top, r.versions = v, append(r.versions, v)
	default:
		v := r.versions[w.r.IntN(len(r.versions))]
		to := engine.Withdrawn
		if r.withdrawn[v.ID] {
			to = engine.Stands
		}
		if err := w.st.SetStanding(ctx, enginetest.Digest(v), to); err != nil {
			w.t.Fatal(err)
		}
		r.withdrawn[v.ID] = to == engine.Withdrawn
	}
	return r.key
}

// refDoc is a record as the reference evaluator sees it: read from the
// engine (not the index), decoded with encoding/json.
type refDoc struct {
	key, id, collection string
	createdBy           string
	createdAt           float64 // Unix ms
	body                map[string]any
	hasBody             bool
	links               map[string][]string
	tags                []string
	json                []byte
}

// current lists every record that reads, with what the reference needs.
func (w *world) current() map[string]*refDoc {
	w.t.Helper()
	out := map[string]*refDoc{}
	for _, r := range w.recs {
		raw, err := w.st.CurrentJSON(ctx, w.space, r.key)
		if errors.Is(err, engine.ErrNotFound) {
			continue
		}
		if err != nil {
			w.t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			w.t.Fatal(err)
		}
		if m["deleted"] == true {
			continue
		}
		t, err := record.ParseTime(r.first.CreatedAt)
		if err != nil {
			w.t.Fatal(err)
		}
		d := &refDoc{key: r.key, id: m["id"].(string), collection: m["collection"].(string), createdBy: r.w.Key.DID(),
			createdAt: float64(t.UnixMilli()), links: map[string][]string{}, json: raw}
		d.body, d.hasBody = m["body"].(map[string]any)
		if ls, ok := m["links"].([]any); ok {
			for _, l := range ls {
				lm := l.(map[string]any)
				d.links[lm["rel"].(string)] = append(d.links[lm["rel"].(string)], lm["to"].(string))
			}
		}
		if ts, ok := m["tags"].([]any); ok {
			for _, t := range ts {
				d.tags = append(d.tags, t.(string))
			}
		}
		out[r.key] = d
	}
	return out
}

// refValue is a single-valued attribute of a reference doc.
func (d *refDoc) value(name string) (any, bool) {
	switch name {
	case "@key":
		return d.key, true
	case "@collection":
		return d.collection, true
	case "@createdBy":
		return d.createdBy, true
	case "@createdAt":
		return d.createdAt, true
	}
	if !d.hasBody {
		return nil, false
	}
	var v any = d.body
	for _, s := range strings.Split(name, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[s]; !ok {
			return nil, false
		}
	}
	return v, true
}

// refMatch is the reference evaluator of a filter (docs/queries.md),
// written apart from the index's: Go values of encoding/json.
func refMatch(f map[string]any, d *refDoc, account string) bool {
	for name, v := range f {
		switch name {
		case "$and", "$or":
			any1, all := false, true
			for _, g := range v.([]any) {
				if refMatch(g.(map[string]any), d, account) {
					any1 = true
				} else {
					all = false
				}
			}
			if name == "$and" && !all || name == "$or" && !any1 {
				return false
			}
			continue
		case "$not":
			if refMatch(v.(map[string]any), d, account) {
				return false
			}
			continue
		}
		ops, isOps := v.(map[string]any)
		if isOps {
			for k := range ops {
				if !strings.HasPrefix(k, "$") {
					isOps = false
				}
			}
			if len(ops) == 0 {
				isOps = false
			}
		}
		if !isOps {
			ops = map[string]any{"$eq": v}
		}
		for op, arg := range ops {
			if !refCond(name, op, subMe(arg, account), d) {
				return false
			}
		}
	}
	return true
}

func subMe(v any, account string) any {
	switch x := v.(type) {
	case string:
		if x == "$me" {
			return account
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = subMe(e, account)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = subMe(e, account)
		}
		return out
	}
	return v
}

func refCond(name, op string, arg any, d *refDoc) bool {
	if name == "@createdAt" {
		arg = refTime(arg)
		if l, ok := arg.([]any); ok {
			for i := range l {
				l[i] = refTime(l[i])
			}
		}
	}
	if strings.HasPrefix(name, "link:") || name == "@tags" {
		set := d.tags
		if name != "@tags" {
			set = d.links[name[5:]]
		}
		has := func(x any) bool { s, ok := x.(string); return ok && slices.Contains(set, s) }
		switch op {
		case "$eq", "$contains":
			return has(arg)
		case "$ne":
			return !has(arg)
		case "$in", "$nin":
			in := slices.ContainsFunc(arg.([]any), has)
			return in == (op == "$in")
		case "$exists":
			return (len(set) > 0) == arg.(bool)
		}
		panic("operator " + op)
	}
	v, ok := d.value(name)
	switch op {
	case "$exists":
		return ok == arg.(bool)
	case "$eq":
		return ok && reflect.DeepEqual(v, arg)
	case "$ne":
		return !(ok && reflect.DeepEqual(v, arg))
	case "$in", "$nin":
		in := ok && slices.ContainsFunc(arg.([]any), func(x any) bool { return reflect.DeepEqual(v, x) })
		return in == (op == "$in")
	case "$contains":
		if a, isArr := v.([]any); ok && isArr {
			return slices.ContainsFunc(a, func(x any) bool { return reflect.DeepEqual(x, arg) })
		}
		s, isStr := v.(string)
		sub, subStr := arg.(string)
		return ok && isStr && subStr && strings.Contains(s, sub)
	}
	if !ok {
		return false
	}
	var c int
	switch x := v.(type) {
	case float64:
		y, isNum := arg.(float64)
		if !isNum {
			return false
		}
		c = cmpFloat(x, y)
	case string:
		y, isStr := arg.(string)
		if !isStr {
			return false
		}
		c = strings.Compare(x, y)
	default:
		return false
	}
	switch op {
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	case "$lt":
		return c < 0
	}
	return c <= 0
}

func refTime(v any) any {
	if s, ok := v.(string); ok {
		t, err := record.ParseTime(s)
		if err != nil {
			panic(err)
		}
		return float64(t.UnixMilli())
	}
	return v
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// refRank orders values of different types (docs/queries.md, "Order").
func refRank(v any, ok bool) int {
	if !ok {
		return 1
	}
	switch x := v.(type) {
	case nil:
		return 2
	case bool:
		if x {
			return 4
		}
		return 3
	case float64:
		return 5
	case string:
		return 6
	case []any:
		return 7
	}
	return 8
}

// refCompare orders two docs by an order: its value (fields), then
// @createdAt, then @key; @key alone for @key.
func refCompare(by string, a, b *refDoc) int {
	if by == "@key" {
		return strings.Compare(a.key, b.key)
	}
	if by != "@createdAt" {
		va, oka := a.value(by)
		vb, okb := b.value(by)
		if c := refRank(va, oka) - refRank(vb, okb); c != 0 {
			return c
		}
		if oka && okb {
			switch x := va.(type) {
			case float64:
				if c := cmpFloat(x, vb.(float64)); c != 0 {
					return c
				}
			case string:
				if c := strings.Compare(x, vb.(string)); c != 0 {
					return c
				}
			case []any, map[string]any:
				ja, _ := canonical.Marshal(toCanonical(va))
				jb, _ := canonical.Marshal(toCanonical(vb))
				if c := bytes.Compare(ja, jb); c != 0 {
					return c
				}
			}
		}
	}
	if c := cmpFloat(a.createdAt, b.createdAt); c != 0 {
		return c
	}
	return strings.Compare(a.key, b.key)
}

// refQuery is the reference's answer: every record that reads and passes,
// in the query's order.
func refQuery(cur map[string]*refDoc, coll string, where map[string]any, by string, desc bool, account string) []*refDoc {
	var out []*refDoc
	for _, d := range cur {
		if d.collection == coll && (where == nil || refMatch(where, d, account)) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b *refDoc) int {
		c := refCompare(by, a, b)
		if desc {
			return -c
		}
		return c
	})
	return out
}
