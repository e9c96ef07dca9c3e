package index

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// Options configures an [Index]. nil means the defaults.
type Options struct {
	// Fields names, per collection, the body field paths to keep an index
	// of (their values in order), so a where on one, or an order by one,
	// reads only what matches. 02 §6.1 gives a definition no such member,
	// so the node configures them. At most 16 a collection, each a body
	// field path as a query writes it. Changing them reindexes the store
	// at its next Open. Default none.
	Fields map[string][]string
	// LiveBuffer is how many changes a live query holds for its reader
	// before it is dropped as too slow. Default 256.
	LiveBuffer int
	// EventBuffer is how many of the store's events the live queries'
	// dispatcher holds before it is behind and every live query is
	// dropped. Default 8192.
	EventBuffer int
	// Opener opens the sealed bodies of private spaces, so the index
	// answers queries over what they hold (docs/private-spaces.md §14).
	// The index table is the local store's alone: no mirror, segment or
	// backup carries it. Default nil: bodies are indexed as they are.
	Opener Opener
}

// Opener opens a version's sealed body for the index.
type Opener interface {
	// Open returns what a version of a private space holds, its body and
	// links; ok is false when it is not sealed or the key is not held,
	// and the version is indexed as it is.
	Open(v *record.Version) (body any, links []record.Link, ok bool)
}

// maxFields bounds the declared fields of a collection.
const maxFields = 16

// layoutVersion names this package's key layout (encode.go); a store kept
// under another is reindexed.
const layoutVersion = "minca/index/2"

func (o *Options) withDefaults() (Options, error) {
	var out Options
	if o != nil {
		out = *o
	}
	out.Fields = make(map[string][]string, len(o.fieldsOrNil()))
	for c, paths := range o.fieldsOrNil() {
		if c == "" || len(c) > collectionMax {
			return out, fmt.Errorf("minca/index: Options.Fields: %q is not a collection's name (1 to 256 bytes)", c)
		}
		if len(paths) > maxFields {
			return out, fmt.Errorf("minca/index: Options.Fields[%q]: at most %d fields a collection", c, maxFields)
		}
		for _, p := range paths {
			a, err := parseAttr(p, "")
			if err != nil || a.kind != attrField {
				return out, fmt.Errorf("minca/index: Options.Fields[%q]: %q is not a body field path (links, tags, creators and times are indexed already)", c, p)
			}
		}
		ps := slices.Clone(paths)
		slices.Sort(ps)
		out.Fields[c] = slices.Compact(ps)
	}
	switch {
	case out.LiveBuffer < 0 || out.EventBuffer < 0:
		return out, fmt.Errorf("minca/index: Options: LiveBuffer %d and EventBuffer %d must not be negative", out.LiveBuffer, out.EventBuffer)
	}
	if out.LiveBuffer == 0 {
		out.LiveBuffer = 256
	}
	if out.EventBuffer == 0 {
		out.EventBuffer = 8192
	}
	return out, nil
}

func (o *Options) fieldsOrNil() map[string][]string {
	if o == nil {
		return nil
	}
	return o.Fields
}

// declared is one declared field index.
type declared struct {
	attr attr
	tag  []byte
}

// Index answers queries over the readable current versions of a store's
// records (06 §2.11, 02 §9.5), from indexes it keeps in the store's own
// write batches as the store's [engine.Indexer]. Its methods are safe for
// concurrent use.
type Index struct {
	opts   Options
	fields map[string][]declared
	layout string

	mu   sync.Mutex // guards st and live
	st   *engine.Store
	live *dispatcher
}

var _ engine.Indexer = (*Index)(nil)

// New makes an index with its options, checked. It answers once the store
// it indexes is opened with it as Options.Indexer and given to
// [Index.Attach]; [Open] does both.
func New(opts *Options) (*Index, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ix := &Index{opts: o, fields: map[string][]declared{}}
	h := sha256.New()
	cs := make([]string, 0, len(o.Fields))
	for c := range o.Fields {
		cs = append(cs, c)
	}
	slices.Sort(cs)
	for _, c := range cs {
		h.Write([]byte(c + "\x00" + strings.Join(o.Fields[c], "\x00") + "\x00\x00"))
		for _, p := range o.Fields[c] {
			a, _ := parseAttr(p, "")
			ix.fields[c] = append(ix.fields[c], declared{attr: a, tag: fieldTag(p)})
		}
	}
	ix.layout = layoutVersion
	if o.Opener != nil {
		ix.layout += " opened"
	}
	if len(cs) > 0 {
		ix.layout += " fields " + hex.EncodeToString(h.Sum(nil)[:8])
	}
	return ix, nil
}

// Open opens a store on kv with a new index as its Indexer (reindexing it
// when needed, which may take a while on a large store) and returns both.
// eo may be nil; its Indexer is replaced.
func Open(kv engine.KV, eo *engine.Options, opts *Options) (*engine.Store, *Index, error) {
	ix, err := New(opts)
	if err != nil {
		return nil, nil, err
	}
	var o engine.Options
	if eo != nil {
		o = *eo
	}
	o.Indexer = ix
	st, err := engine.Open(kv, &o)
	if err != nil {
		return nil, nil, err
	}
	ix.Attach(st)
	return st, ix, nil
}

// Attach gives the index the store it indexes, opened with the index as
// its Indexer.
func (ix *Index) Attach(st *engine.Store) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.st = st
}

func (ix *Index) store() (*engine.Store, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.st == nil {
		return nil, fmt.Errorf("minca/index: no store attached")
	}
	return ix.st, nil
}

// Layout implements engine.Indexer: this package's key layout and the
// declared fields.
func (ix *Index) Layout() string { return ix.layout }
