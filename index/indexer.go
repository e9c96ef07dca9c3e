package index

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// change is what a record's current version changing was, as the index
// saw it inside the batch; it rides on the engine's EventCurrent to the
// live queries (live.go). old and new are nil when the record did not or
// does not read (a delete does not).
type change struct {
	space, key string
	old, new   *doc
}

// Current implements engine.Indexer: it deletes the entries of the record's
// old readable current version and writes those of the new one, in the
// store's batch (encode.go has the tables).
func (ix *Index) Current(b engine.IndexBatch, c engine.CurrentChange) (any, error) {
	var old, nw *doc
	if c.Old != nil && !c.Old.Deleted {
		old = ix.docOf(c.Space, c.Old, nil)
		lv, ok, err := b.Get(locatorKey(c.Space, old.collection, c.Key))
		if err != nil {
			return nil, err
		}
		if !ok || len(lv) < createdLen {
			return nil, fmt.Errorf("%w: index: record %s of %s reads but has no locator entry (reindex the store)", engine.ErrCorrupt, c.Key, c.Space)
		}
		old.created, old.createdBy = lv[:createdLen:createdLen], string(lv[createdLen:])
		for _, e := range ix.entries(old, false) {
			b.Delete(e.k)
		}
	}
	if c.New != nil && !c.New.Deleted {
		nw = ix.docOf(c.Space, c.New, c.NewJSON)
		if old != nil && old.v.FirstID() == c.New.FirstID() {
			nw.created, nw.createdBy = old.created, old.createdBy
		} else if err := creation(b, nw); err != nil {
			return nil, err
		}
		for _, e := range ix.entries(nw, true) {
			b.Set(e.k, e.v)
		}
	}
	if old == nil && nw == nil {
		return nil, nil
	}
	return &change{space: c.Space, key: c.Key, old: old, new: nw}, nil
}

// docOf makes the doc of a whole version (json nil: made when needed). A
// sealed body the Opener opens is indexed opened, and the version's JSON
// carries what it holds as "opened" (OpenedJSON).
func (ix *Index) docOf(space string, v *record.Version, json []byte) *doc {
	d := &doc{space: space, collection: v.Collection, key: v.Key, id: v.ID, json: json,
		content: &content{body: v.Body, hasBody: v.HasBody, links: v.Links, tags: v.Tags, v: v}}
	if ix.opts.Opener == nil || !v.HasBody || v.Deleted {
		return d
	}
	if body, links, ok := ix.opts.Opener.Open(v); ok {
		d.body, d.links = body, links
		if json != nil {
			d.json = OpenedJSON(json, body, links)
		}
	}
	return d
}

// OpenedJSON is a version's canonical JSON with what its sealed body holds
// beside it, as the member "opened": {"body", "links"?} (docs/private-
// spaces.md §14). The signed version is the JSON without "opened". It is
// appended last: a version's canonical JSON sorts its members, and every
// version in a space has seq and space, which sort after "opened", so a
// member a writer named "opened" is never last (readers tell them apart
// so). A version that has one is left as it is.
func OpenedJSON(versionJSON []byte, body any, links []record.Link) []byte {
	if bytes.Contains(versionJSON, []byte(`"opened":`)) {
		if v, err := canonical.Parse(versionJSON); err == nil {
			if o, ok := v.(*canonical.Object); ok && o.Has("opened") {
				return versionJSON
			}
		}
	}
	o := canonical.NewObject("body", body)
	if len(links) > 0 {
		o.Set("links", record.LinksValue(links))
	}
	b, err := canonical.Marshal(o)
	if err != nil || len(versionJSON) < 2 || versionJSON[len(versionJSON)-1] != '}' {
		return versionJSON
	}
	out := make([]byte, 0, len(versionJSON)+len(b)+12)
	out = append(out, versionJSON[:len(versionJSON)-1]...)
	out = append(out, `,"opened":`...)
	out = append(out, b...)
	return append(out, '}')
}

// creation fills in @createdAt and @createdBy from the record's first
// version, the one its chain names (02 §4.5): its createdAt, and its root
// (02 §9.3 step 5). A first version that is not held, or a createdAt that
// does not parse, leaves them absent.
func creation(h engine.HeldReader, d *doc) error {
	first := d.v
	if first.Seq > 0 {
		genesis, _ := first.GenesisDigest()
		f, ok, err := h.Held(genesis)
		if err != nil {
			return err
		}
		if !ok {
			d.created = appendCreated(nil, 0, false)
			return nil
		}
		first = f
	}
	ms, ok := int64(0), false
	if t, err := record.ParseTime(first.CreatedAt); err == nil {
		ms, ok = t.UnixMilli(), true
	}
	d.created = appendCreated(nil, ms, ok)
	d.createdBy = rootOf(first)
	return nil
}

// rootOf is the account a held version's author acted for (02 §9.3 step
// 5): the author when it carries no proof, else its note's issuer — the
// judge checked the note before the version was stored.
func rootOf(v *record.Version) string {
	if v.Proof == nil {
		return v.Author
	}
	p, _ := v.Proof.Get("payload")
	if o, ok := p.(*canonical.Object); ok {
		if iss, ok := o.Get("iss"); ok {
			if s, ok := iss.(string); ok {
				return s
			}
		}
	}
	return ""
}

type kv struct{ k, v []byte }

func locatorKey(space, collection, key string) []byte {
	return append(append(prefixOf(tLocator, space, collection), key...), 0)
}

// entries lists d's keys in every table, with their values when values.
// The keys share one buffer.
func (ix *Index) entries(d *doc, values bool) []kv {
	place := placeOf(d.space, d.collection)
	fields := ix.fields[d.collection]
	out := make([]kv, 0, 3+len(d.links)+len(d.tags)+len(fields))
	buf := make([]byte, 0, (len(place)+createdLen+len(d.key)+2)*cap(out)+256)
	// add puts table ‖ place ‖ parts ‖ the suffix in buf, as one key.
	add := func(table byte, v []byte, parts ...[]byte) {
		start := len(buf)
		buf = append(append(buf, table), place[1:]...)
		for _, p := range parts {
			buf = append(buf, p...)
		}
		buf = appendSuffix(buf, d.created, d.key)
		out = append(out, kv{k: buf[start:len(buf):len(buf)], v: v})
	}
	var lv, pv []byte
	tag := idTag(d.id) // what each secondary entry holds
	if values {
		lv = append(append(make([]byte, 0, createdLen+len(d.createdBy)), d.created...), d.createdBy...)
		pv = primaryValue(d)
	}
	start := len(buf)
	buf = append(append(append(append(buf, tLocator), place[1:]...), d.key...), 0)
	out = append(out, kv{k: buf[start:len(buf):len(buf)], v: lv})
	add(tPrimary, pv)
	if d.createdBy != "" {
		add(tCreator, tag, appendEsc(nil, d.createdBy))
	}
	for i, l := range d.links {
		if !slices.ContainsFunc(d.links[:i], func(m record.Link) bool { return m == l }) {
			add(tBacklink, tag, appendEsc(appendEsc(nil, l.Rel), l.To))
		}
	}
	for i, t := range d.tags {
		if !slices.Contains(d.tags[:i], t) {
			add(tTag, tag, appendEsc(nil, t))
		}
	}
	for _, f := range fields {
		v, ok := d.get(f.attr)
		add(tField, tag, f.tag, appendValue(nil, v, ok))
	}
	return out
}

// idTag is what a secondary entry holds: the first 16 characters (75
// bits) of its record's version id, so a reader finds whether the version
// it reads through the entry is the one the entry was written for.
func idTag(id string) []byte { return []byte(id[:min(len(id), tagLen)]) }

const tagLen = 16

// tagOf is the id tag of a doc read from a primary entry.
func (d *doc) tagOf() []byte {
	if d.lazy {
		return d.raw[1][:min(len(d.raw[1]), tagLen)]
	}
	return idTag(d.id)
}

// primaryValue is a primary entry's value: the id, @createdBy, then the
// version's canonical JSON.
func primaryValue(d *doc) []byte {
	b := make([]byte, 0, 2+len(d.id)+len(d.createdBy)+len(d.json))
	b = binary.AppendUvarint(b, uint64(len(d.id)))
	b = append(b, d.id...)
	b = binary.AppendUvarint(b, uint64(len(d.createdBy)))
	b = append(b, d.createdBy...)
	return append(b, d.json...)
}

// readPrimary makes d the doc of a primary entry (key past its prefix, the
// suffix; value as primaryValue wrote it); its bytes are suffix's and
// val's. Body, links and tags are read when first asked for (doc.load).
func readPrimary(d *doc, space, collection string, suffix, val []byte) (*doc, error) {
	created, key, at, ok := splitSuffix(suffix)
	bad := func() (*doc, error) { return nil, fmt.Errorf("%w: index: primary entry of %q", engine.ErrCorrupt, key) }
	if !ok || at != 0 {
		return bad()
	}
	n, w := binary.Uvarint(val)
	if w <= 0 || n > uint64(len(val)-w) {
		return bad()
	}
	id, val := val[w:w+int(n)], val[w+int(n):]
	n, w = binary.Uvarint(val)
	if w <= 0 || n > uint64(len(val)-w) {
		return bad()
	}
	by, val := val[w:w+int(n)], val[w+int(n):]
	// Field by field: a doc is reused through a page, and its space and
	// collection stay. Its texts are made when asked for (doc.texts).
	if d.space != space || d.collection != collection {
		d.space, d.collection = space, collection
	}
	d.raw = [3][]byte{key, id, by}
	d.key, d.id, d.createdBy, d.lazy = "", "", "", true
	d.created, d.json, d.bad = created, val, nil
	if d.content != nil {
		d.content = nil
	}
	return d, nil
}

// load reads body, links and tags from d.json, once, when a filter or an
// order first asks for them; a version that does not parse has none, and
// d.bad says why.
func (d *doc) load() {
	if d.content != nil {
		return
	}
	d.content = &content{}
	v, err := canonical.Parse(d.json)
	o, ok := v.(*canonical.Object)
	if err != nil || !ok {
		d.texts()
		d.bad = fmt.Errorf("%w: index: the version of %q does not parse", engine.ErrCorrupt, d.key)
		return
	}
	d.body, d.hasBody = o.Get("body")
	lo := o
	// "opened" is the index's only when it is the last member (OpenedJSON)
	// beside a sealed body: a writer's own member of that name is not.
	if n := len(o.Members); n > 0 && o.Members[n-1].Name == "opened" && sealedShape(d.body) {
		if oo, ok := o.Members[n-1].Value.(*canonical.Object); ok {
			d.body, d.hasBody = oo.Get("body")
			lo = oo
		}
	}
	if lv, ok := lo.Get("links"); ok {
		if d.links, err = record.ParseLinks(lv); err != nil {
			d.links = nil // a stored version's links are well formed; none else
		}
	}
	if tv, ok := o.Get("tags"); ok {
		list, _ := tv.([]any)
		for _, t := range list {
			if s, ok := t.(string); ok {
				d.tags = append(d.tags, s)
			}
		}
	}
}

// sealedShape reports whether a body is a sealed body, {sealed, keyId}
// (02 §3.1).
func sealedShape(body any) bool {
	o, ok := body.(*canonical.Object)
	return ok && o.Len() == 2 && o.Has("sealed") && o.Has("keyId")
}
