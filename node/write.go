package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// Reason codes of the write path's own refusals (02 §4, §9.6), beside the
// judge's (record, collection and space codes).
const (
	CodeSpaceNotKept = "write/space"      // the space's genesis is not held: the node does not keep it
	CodeNotFound     = "write/not-found"  // a delete of a record not held, or already deleted
	CodeOtherColl    = "write/collection" // the key's chain is in another collection (02 §4.1)
	CodeBadKey       = "write/key"        // a key that is neither a valid key nor a chosen name, or not the onePer key
	CodeSchema       = "write/schema"     // the body does not fit the collection's schema (02 §6.2, §9.6)
	CodeLinks        = "write/links"      // the links do not conform to the definition (02 §5.2, §9.6)
	CodePrivate      = "write/private"    // a private space this node holds no key of: it seals nothing, and writes nothing in the clear
	CodeBadInput     = "write/input"      // a body, link or file that is not what a version carries
	CodeNotStanding  = "write/withdrawn"  // the judge would store it withdrawn at once (a revoked key, a forked line)
	CodeWaits        = "write/later"      // the judge would hold it aside: what it names is not held
)

// WriteError is why the node did not write: a check before signing (02
// §9.6: a writer SHOULD NOT write what does not conform) or the judge's
// refusal (02 §9). Nothing was signed that left the node, and no log place
// was used.
type WriteError struct {
	Code    string
	Field   string
	Message string
	// Issues are the schema or link problems, with paths ($.body…).
	Issues []collection.Issue
}

func (e *WriteError) Error() string {
	s := e.Code + ": " + e.Message
	for i, is := range e.Issues {
		if i == 3 {
			s += fmt.Sprintf("; and %d more", len(e.Issues)-3)
			break
		}
		s += "; " + is.String()
	}
	return s
}

func writeErr(code, field, msg string) *WriteError {
	return &WriteError{Code: code, Field: field, Message: msg}
}

// fromRefusal is the judge's refusal as a WriteError.
func fromRefusal(r *record.Refusal) *WriteError {
	return &WriteError{Code: r.Code, Field: r.Field, Message: r.Message}
}

// FileRef names a file a version carries outside its body (02 §3.1 files).
type FileRef = record.File

// PutOptions are what a record's new version says beyond its body.
type PutOptions struct {
	// Key is the record's key: a full key (owned or shared, 02 §4.1) or a
	// name the account chooses ("settings" → owner.settings). Empty: the
	// onePer key when the collection's rules in force have onePer, else a
	// fresh key.
	Key   string
	Links []record.Link
	Files []FileRef
}

// What a record's collection and body are, as the node writes them (and
// `minca sign` signs them): a name a definition can have (02 §6.1), so
// the space can give it a schema and rules, and an object, so it can have
// fields. Peers take any collection and any JSON (02 §3.1); a writer
// keeps to these.
const (
	CollectionRule = "a collection is lower case with at least one dot, like app.todo (^[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*)+$, 02 §6.1)"
	BodyRule       = "a record's body is a JSON object, like {\"text\":\"Buy milk\"}"
)

// Put writes the next version of a record of collection in space with
// body (a value of canonical's model, or anything encoding/json
// marshals): keys as 02 §4.1 says, the version after the one held as
// current, a delete included (§4.2), retain where §4.5 says a writer must,
// tags under the topics in force (§8), seen the latest access changes
// held, and the session key's next log place (§4.10). The version is
// checked (schema, links, rules, the judge) before it leaves, then stored
// through the judge with sync. It returns the signed version, or a
// *WriteError saying why not.
func (n *Node) Put(ctx context.Context, spaceID, coll string, body any, o *PutOptions) (*record.Version, error) {
	if o == nil {
		o = &PutOptions{}
	}
	if record.IsSys(coll) {
		return nil, writeErr(CodeBadInput, "collection", "a record's collection is not sys.* (the access history and the account's machinery are written through their own calls)")
	}
	if !collection.ValidName(coll) {
		return nil, writeErr(CodeBadInput, "collection", fmt.Sprintf("collection %q: %s", coll, CollectionRule))
	}
	b, err := asValue(body)
	if err != nil {
		return nil, writeErr(CodeBadInput, "body", err.Error())
	}
	if _, ok := b.(*canonical.Object); !ok {
		return nil, writeErr(CodeBadInput, "body", BodyRule)
	}
	if err := n.checkFiles(ctx, o.Files); err != nil {
		return nil, err
	}
	r := &writeReq{space: spaceID, collection: coll, key: o.Key, body: b, links: o.Links, files: o.Files}
	n.w.early(ctx, r)
	return n.w.do(ctx, r)
}

// Delete writes a delete of the record at key in space: the version after
// its current one, deleted, with no body, links or tags (02 §4.4).
func (n *Node) Delete(ctx context.Context, spaceID, key string) (*record.Version, error) {
	if !record.ValidKey(key) {
		return nil, writeErr(CodeBadKey, "key", "a key is 1–128 characters of [a-z0-9:._-] (02 §4.1)")
	}
	return n.w.do(ctx, &writeReq{space: spaceID, key: key, del: true})
}

// asValue turns a body into canonical's value model.
func asValue(body any) (any, error) {
	switch b := body.(type) {
	case nil:
		return nil, errors.New("a version that is not a delete has a body (use null for none)")
	case *canonical.Object, []any, string, float64, bool:
		return b, nil
	case []byte:
		return canonical.Parse(b)
	case map[string]any:
		if v, ok := plainValue(b, 1); ok {
			return v, nil
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return canonical.Parse(raw)
}

// writeReq is one write for the writer.
type writeReq struct {
	space, collection, key string
	body                   any
	del                    bool
	links                  []record.Link
	files                  []FileRef
	// access: an access-history change; key is exact and the writer
	// writes it alone in its batch.
	access bool
	// sys: a version of a sys.* collection outside the access history
	// (sys.joined); key is exact.
	sys bool
	// sealWith: a private space's body is sealed under this key (the
	// carry spaces, whose key every device derives: node/carriers.go).
	sealWith *seal.Key
	// early: the write's draft made on its caller's goroutine before it
	// queued, all but its log place (writer.early); nil when none was.
	early *drafted

	done chan writeResult
}

type writeResult struct {
	v   *record.Version
	err error
}

// rulesAt is what a write reads of its space's access history as of the
// heads it will name as seen (03 §3.2): the genesis, those heads, the key
// heads a private space seals under, and the rules in force for the
// write's collection.
type rulesAt struct {
	g         *space.Genesis
	seen      []string
	heads     []seal.Head
	in        collection.InForce
	contested bool
}

// rulesFor reads the space's history as of its heads, and the rules in
// force for coll ("": none read); false when the space is not kept.
func (w *writer) rulesFor(ctx context.Context, spaceID, coll string, ring *seal.Keyring) (rulesAt, bool, error) {
	var at rulesAt
	ok, err := w.n.judge.WithHistory(ctx, spaceID, func(h *space.History) error {
		at.g = h.Genesis()
		at.seen = h.Heads()
		st, err := h.At(at.seen)
		if err != nil {
			return err
		}
		at.heads = st.KeyHeads()
		if coll != "" {
			at.in, at.contested = w.inForce(ctx, at.g, st, ring, coll)
		}
		return nil
	})
	return at, ok, err
}

// inForce is the definition in force for coll in st, and whether coll is
// contested. A private space's definitions are sealed: they are read
// through the node's keys (docs/private-spaces.md §4, §9).
func (w *writer) inForce(ctx context.Context, g *space.Genesis, st *space.State, ring *seal.Keyring, coll string) (collection.InForce, bool) {
	if !g.Private() || record.IsSys(coll) {
		return st.InForce(coll)
	}
	if ring == nil {
		return collection.Unreadable(), false
	}
	in, rf := judge.DefinitionInForce(overlay{ctx, w.n.st, w}, st, ring, coll)
	return in, rf != nil
}

// draft derives the draft of the version a write makes — all of it but
// its log place, which the writer takes under the places' lock (02 §4.10)
// — and makes the checks a writer makes before signing (§9.6); and tells
// whether the draft follows a top read from the store or the writes under
// way (false for a fresh key, which has none).
func (w *writer) draft(ctx context.Context, r *writeReq, root string) (*record.Draft, bool, error) {
	n := w.n
	ring, err := n.keys.load(r.space)
	if err != nil {
		return nil, false, err // a key file that does not read is named, not taken for none
	}
	// A delete names its key: the record it deletes keeps its collection,
	// whose rules are the ones read (an access or sys delete reads those
	// of the collection it was given).
	coll, rulesColl := r.collection, r.collection
	var top *record.Version
	readTop := true
	if r.del {
		if top, err = w.top(ctx, r.space, r.key); err != nil {
			return nil, false, err
		}
		if top != nil && !top.Deleted {
			coll = top.Collection
			if !r.access && !r.sys {
				rulesColl = coll
			}
		}
	}
	at, ok, err := w.rulesFor(ctx, r.space, rulesColl, ring)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return nil, false, writeErr(CodeSpaceNotKept, "space", "the node does not keep the space "+r.space+" (no genesis held): create or join it first")
	}
	if r.del && (top == nil || top.Deleted) {
		return nil, false, writeErr(CodeNotFound, "key", "there is no record "+r.key+" to delete in "+r.space)
	}
	var sealer *seal.Key // the key the body is sealed under; nil in the clear
	if at.g.Private() && !r.del && sealedIn(r) {
		if sealer = r.sealWith; sealer == nil {
			if sealer, err = n.sealingKey(ctx, r.space, ring, at.heads); err != nil {
				return nil, false, err
			}
		}
	}
	key := r.key
	if !r.access && !r.sys && !r.del {
		// The space's oneKey (an HKDF) is derived only for the rules that
		// use it: most writes have none.
		var oneKey collection.OneKey
		if at.in.Def != nil && at.in.Def.Rules.HasOnePer() {
			oneKey = collection.PublicOneKey(at.g.ID)
			if at.g.Private() && ring != nil {
				oneKey, _ = ring.OneKey() // held whenever sealer is
			}
		}
		if key, err = keyFor(coll, r.key, root, at.in, oneKey, collection.Content{Body: r.body, Links: r.links}); err != nil {
			return nil, false, err
		}
		// A fresh key (16 random bytes, 02 §4.1) has no version yet:
		// nothing to read.
		fresh := r.key == "" && (at.in.Def == nil || !at.in.Def.Rules.HasOnePer())
		readTop = !fresh
		if !fresh {
			if top, err = w.top(ctx, r.space, key); err != nil {
				return nil, false, err
			}
		}
	} else if !r.del {
		if top, err = w.top(ctx, r.space, key); err != nil {
			return nil, false, err
		}
	}
	if at.contested {
		return nil, false, writeErr(space.CodeStandingContested, "collection", coll+" is contested with no definition in force: no one writes in it until a change settles it (02 §6.3)")
	}
	if top != nil && top.Collection != coll {
		return nil, false, writeErr(CodeOtherColl, "key", "the record "+key+" is in "+top.Collection+", not "+coll+": a record keeps its collection (02 §4.1, §4.7); choose another key")
	}
	d := &record.Draft{Space: r.space, Collection: coll, CreatedAt: n.now(), Key: key, After: top, Seen: at.seen, Deleted: r.del}
	seq := int64(0)
	if top != nil {
		seq = top.Seq + 1
	}
	d.Retain = collection.WriterMustRetain(coll, seq, r.del, at.in)
	if r.del {
		return d, readTop, nil
	}
	if len(r.links) > record.MaxLinks {
		return nil, false, writeErr(CodeBadInput, "links", fmt.Sprintf("at most %d links a version (02 §5.1)", record.MaxLinks))
	}
	for i, f := range r.files {
		if f.Hash.IsZero() || f.Size < 0 || f.Size > record.MaxSafeInteger {
			return nil, false, writeErr(CodeBadInput, fmt.Sprintf("files[%d]", i), "a file is {hash, size}: a content id and a size in bytes")
		}
	}
	d.Body, d.Links, d.Files = r.body, r.links, r.files
	if def := at.in.Def; def != nil {
		if def.Schema != nil {
			if is := def.Schema.Validate(r.body); len(is) > 0 {
				return nil, false, &WriteError{Code: CodeSchema, Field: "body", Message: "the body does not fit the schema of " + coll + " (02 §6.2; a writer does not write what does not conform, §9.6)", Issues: is}
			}
		}
		if is := collection.LinkIssues(r.links, at.in, storeTargets{ctx, n.st, r.space}); len(is) > 0 {
			return nil, false, &WriteError{Code: CodeLinks, Field: "links", Message: "the links do not conform to the definition of " + coll + " (02 §5.2, §9.6)", Issues: is}
		}
		tagKey := collection.PublicTagKey(r.space)
		if sealer != nil {
			tagKey = sealer.TagKey() // 02 §8.2: the key the body is sealed with
		}
		if d.Tags, err = def.Tags(tagKey, collection.Content{Body: r.body, Links: r.links}); err != nil {
			return nil, false, writeErr(CodeBadInput, "body", "the topic tags: "+err.Error())
		}
	}
	if sealer != nil {
		// 02 §5.1: the links leave the version and are sealed with the body.
		b, err := seal.SealBody(sealer, r.space, coll, key, collection.Content{Body: r.body, Links: r.links})
		if err != nil {
			return nil, false, writeErr(CodeBadInput, "body", err.Error())
		}
		d.Body, d.Links = b, nil
	}
	return d, readTop, nil
}

// sealedIn reports whether a write's body is sealed in a private space
// (docs/private-spaces.md §4): every body but the access changes' other
// than sys.collection, and sys.memberkey's and sys.box's.
func sealedIn(r *writeReq) bool {
	switch {
	case r.access:
		return r.collection == space.KindDefine.Collection()
	case r.sys:
		return !judge.InClear(r.collection)
	}
	return true
}

// sealingKey is the key a write in a private space is sealed under
// (docs/private-spaces.md §10): of the current keys as of its seen, the
// one the ring holds, not stale, whose keyId sorts first; the store's
// boxes and key changes are looked at first when a current key is not
// held.
func (n *Node) sealingKey(ctx context.Context, spaceID string, ring *seal.Keyring, heads []seal.Head) (*seal.Key, error) {
	if ring == nil {
		return nil, writeErr(CodePrivate, "space", "the space "+spaceID+" is private and this node holds none of its keys: it cannot seal, and nothing is written in the clear (docs/private-spaces.md §10)")
	}
	// A current key not held yet may be in a box the store holds: every
	// writer seals under the same one once it has them all.
	if slices.ContainsFunc(heads, func(h seal.Head) bool { _, ok := ring.Key(h.KeyID); return !ok }) {
		if _, err := n.takeKeys(ctx, spaceID, ""); err != nil {
			return nil, err
		}
	}
	k, err := ring.Current(heads)
	if err != nil {
		var e *seal.Error
		if errors.As(err, &e) {
			return nil, writeErr(e.Code, "space", e.Message)
		}
		return nil, err
	}
	return k, nil
}

// keyFor is the key a write goes to (02 §4.1): the onePer key under rules
// in force (§7.3, derived with the space's oneKey), the key given, the
// chosen name's owned key, or a fresh one.
func keyFor(coll, given, root string, in collection.InForce, oneKey collection.OneKey, c collection.Content) (string, error) {
	if d := in.Def; d != nil && d.Rules.HasOnePer() {
		k, err := d.OnePerKey(oneKey, root, c)
		if err != nil {
			return "", writeErr(CodeBadKey, "key", "the rules of "+coll+" have onePer, and this record has no key: "+strings.TrimPrefix(err.Error(), "minca/collection: "))
		}
		if given != "" && given != k {
			return "", writeErr(CodeBadKey, "key", "the rules of "+coll+" have onePer: this record's key is "+k+", not "+given+" (02 §7.3)")
		}
		return k, nil
	}
	switch {
	case given == "":
		return record.FreshKey(root)
	case record.KindOf(given) == record.KindShared:
		return "", writeErr(CodeBadKey, "key", given+" is a shared key, which only a collection whose rules have onePer without @author gives (02 §4.1)")
	case record.KindOf(given) == record.KindOwned:
		if record.Owner(given) != record.OwnerPart(root) {
			return "", writeErr(record.CodeKeyOwner, "key", given+" is another account's key: only "+root+"'s keys start "+record.OwnerPart(root)+" (02 §4.1)")
		}
		return given, nil
	}
	k, err := record.ChosenKey(root, given)
	if err != nil {
		return "", writeErr(CodeBadKey, "key", strings.TrimPrefix(err.Error(), "minca/record: "))
	}
	return k, nil
}

// top is the version the next one follows: the record's top held version
// in 02 §4.3 order, a delete or a withdrawn one included (§4.2), looking
// first at what this batch wrote.
func (w *writer) top(ctx context.Context, spaceID, key string) (*record.Version, error) {
	w.pmu.Lock()
	v, ok := w.pend[spaceID+"\n"+key]
	w.pmu.Unlock()
	if ok {
		return v, nil
	}
	hs, err := w.n.st.History(ctx, spaceID, key)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, nil
	}
	return hs[0].Version, nil
}

// storeTargets are the records links point at, as the store holds them.
type storeTargets struct {
	ctx   context.Context
	st    *engine.Store
	space string
}

func (t storeTargets) Target(key string) (string, bool) {
	v, err := t.st.Current(t.ctx, t.space, key)
	if err != nil || v.Deleted {
		return "", false
	}
	return v.Collection, true
}
