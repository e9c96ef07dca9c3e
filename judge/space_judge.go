package judge

import (
	"context"
	"errors"
	"fmt"
	"github.com/minca-go/minca/canonical"
	"iter"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// Source is where a [SpaceJudge] reads a space the first time it judges a
// version of it: the genesis kept with the store, and the access changes
// held. *engine.Store implements it.
type Source interface {
	Meta(ctx context.Context, name string) ([]byte, bool, error)
	SyncOrder(ctx context.Context, space string, from engine.SyncKey) iter.Seq2[engine.SyncItem, error]
	Version(ctx context.Context, id canonical.ID) (*record.Version, error)
}

// SpaceJudge is the node's full judge of 02 §9 (docs/spaces.md): every
// check of [Judge] — shape, the crypto and capability gates, the chain, the
// first version's key — then, in the reference order of §9.4, the access
// state as of the version's seen (later when it is not held, or the
// space's genesis is not), the onePer key form and a contested collection,
// membership and grant, final, tags, retain, onePer and fixed (§9.4 steps
// 2–5, collection's checks), and whether a change it had not seen took it
// away (withdrawn). Access changes are judged by the replay of the
// space's access history (package space). It never refuses for §9.6's
// reasons: a body that does not fit its schema, links that do not conform,
// an undefined collection.
//
// It keeps each space's history in memory, read from Source the first time
// the space is judged and extended as access changes are stored; it
// implements engine.Restander (re-judging the stored versions a change
// affects, in its batch) and engine.Forgetter. Check is safe for concurrent
// use; Decide and Restand are called by one store, one at a time; the
// query methods may be called alongside.
type SpaceJudge struct {
	// Base makes the checks of a version alone and of its chain.
	Base *Judge
	// Source is the store this judge judges for; it must be set before
	// anything is admitted.
	Source Source

	mu      sync.Mutex
	stale   atomic.Bool
	spaces  map[string]*space.History
	keys    map[string]*publicKeys  // a public space's tag and onePer keys
	pending map[string]space.Result // by version id: what storing it changed, for Restand
	roots   map[string]string       // first versions' roots, for byCreator
}

var (
	_ engine.Judge     = (*SpaceJudge)(nil)
	_ engine.Restander = (*SpaceJudge)(nil)
	_ engine.Forgetter = (*SpaceJudge)(nil)
)

// NewSpaceJudge makes a full judge for the store src, judging notes with
// notes (identity's Checker; nil refuses every version with a proof).
func NewSpaceJudge(notes record.NoteChecker) *SpaceJudge {
	return &SpaceJudge{Base: &Judge{Notes: notes}}
}

func (j *SpaceJudge) env() space.Env {
	return space.Env{Notes: j.Base.Notes, Verifier: j.Base.verifier()}
}

// Check makes the checks of a version alone ([Judge.Check]).
func (j *SpaceJudge) Check(v *record.Version) (engine.Checked, error) { return j.Base.Check(v) }

// Unwritten forgets every space's history: a batch this judge decided was
// not written, so what it added may not be held (engine.Forgetter).
func (j *SpaceJudge) Unwritten() { j.stale.Store(true) }

func (j *SpaceJudge) lock() {
	j.mu.Lock()
	if j.stale.Swap(false) || j.spaces == nil {
		j.spaces, j.pending, j.roots = map[string]*space.History{}, map[string]space.Result{}, map[string]string{}
		j.keys = map[string]*publicKeys{}
	}
}

// History returns a space's history as this judge holds it, reading it
// from Source when not yet read; ok is false when the genesis is not held.
// The history must only be read while no version is being admitted.
func (j *SpaceJudge) History(ctx context.Context, spaceID string) (*space.History, bool, error) {
	j.lock()
	defer j.mu.Unlock()
	h, err := j.space(ctx, spaceID)
	return h, h != nil, err
}

// space returns the space's history, reading it the first time; nil when
// its genesis is not held. j.mu is held.
func (j *SpaceJudge) space(ctx context.Context, id string) (*space.History, error) {
	if h, ok := j.spaces[id]; ok {
		return h, nil
	}
	if j.Source == nil {
		return nil, errors.New("minca/judge: the space judge has no Source")
	}
	g, ok, err := GenesisOf(ctx, j.Source, id)
	if err != nil || !ok {
		return nil, err
	}
	h, err := j.load(ctx, g)
	if err != nil {
		return nil, err
	}
	j.spaces[id] = h
	return h, nil
}

// load reads the access changes held for g's space and replays them: each
// after everything it saw.
func (j *SpaceJudge) load(ctx context.Context, g *space.Genesis) (*space.History, error) {
	h := space.NewHistory(g, j.env())
	var todo []*space.Change
	for item, err := range j.Source.SyncOrder(ctx, g.ID, engine.SyncKey{}) {
		if err != nil {
			return nil, err
		}
		if !space.IsAccessCollection(item.Collection) {
			continue
		}
		v, err := j.Source.Version(ctx, item.Digest)
		if err != nil {
			return nil, fmt.Errorf("minca/judge: reading access change %s: %w", item.Digest, err)
		}
		root, err := record.Root(v, record.InvocationOf(v, g.ID, nil), j.Base.Notes)
		if err != nil {
			continue // held, but not one this judge lets in: store check says so
		}
		c, err := space.ReadChange(g, v, root, j.env())
		if err != nil {
			continue
		}
		todo = append(todo, c)
	}
	for len(todo) > 0 {
		var later []*space.Change
		for _, c := range todo {
			if _, err := h.Add(c); err != nil {
				var m *space.MissingError
				if errors.As(err, &m) {
					later = append(later, c)
				}
				// A held change the replay refuses is left out; store
				// check reports it.
			}
		}
		if len(later) == len(todo) {
			break // what they saw is not held: store check reports them
		}
		todo = later
	}
	return h, nil
}

// Decide judges v against what is held and the access history (02 §9.4).
func (j *SpaceJudge) Decide(hr engine.HeldReader, v *record.Version, c engine.Checked) (engine.Decision, error) {
	d, err := j.Base.Decide(hr, v, c)
	if err != nil || d.Verdict != engine.Stands {
		return d, err
	}
	j.lock()
	defer j.mu.Unlock()
	sp, err := j.space(context.Background(), v.Space)
	if err != nil {
		return engine.Decision{}, err
	}
	if sp == nil {
		return engine.Decision{Verdict: engine.Later, Waits: []string{v.Space}}, nil
	}
	if r := j.accountWrite(sp.Genesis(), v); r != nil {
		return refusedBy(r), nil
	}
	if space.IsAccessCollection(v.Collection) {
		return j.decideAccess(hr, sp, v, c)
	}
	return j.decideVersion(hr, sp, v, c)
}

// accountWrite is 02 §9.4 step 2: in a space that admits only the account
// itself, a note that does not grant /account/write is refused.
func (j *SpaceJudge) accountWrite(g *space.Genesis, v *record.Version) *record.Refusal {
	if !g.Account || v.Proof == nil {
		return nil
	}
	inv := &identity.Invocation{Cmd: space.CmdAccountWrite, Space: g.ID, Collection: v.Collection}
	if j.Base.Notes == nil {
		return &record.Refusal{Code: record.CodeNoProof, Field: "proof", Message: "no note checker to judge the proof"}
	}
	if _, err := j.Base.Notes.CheckNote(v.Proof, v.Author, nil, inv); err != nil {
		return &record.Refusal{Code: space.CodeStandingAccount, Field: "proof",
			Message: "the space admits only the account itself, and this version's note does not grant /account/write: " + err.Error() + " (02 §9.4 step 2, 06 §1.3)"}
	}
	return nil
}

// missing turns ids v's seen names that are not in the history into a
// verdict: later while any is not held, refused when one is held but is no
// access change of the space.
func (j *SpaceJudge) missing(hr engine.HeldReader, v *record.Version, m *space.MissingError) (engine.Decision, error) {
	for _, id := range m.IDs {
		_, ok, err := hr.Held(seenDigest(v, id))
		if err != nil {
			return engine.Decision{}, err
		}
		if ok {
			return refusedBy(&record.Refusal{Code: space.CodeSeenNotAccess, Field: "seen",
				Message: "seen names " + id + ", a held version that is not an access change of this space (02 §3.1)"}), nil
		}
	}
	return engine.Decision{Verdict: engine.Later, Waits: m.IDs}, nil
}

// seenDigest is the digest v read for the id its seen names, zero (never
// held) for one it does not name or that is no id.
func seenDigest(v *record.Version, id string) canonical.ID {
	for i, s := range v.Seen {
		if s == id {
			d, _ := v.SeenDigest(i)
			return d
		}
	}
	return canonical.ID{}
}

// decideAccess judges an access change by the replay (02 §9.4 step 3):
// refused when its author could not make it as of its own seen, else
// stored, standing when it counts and withdrawn when it does not.
func (j *SpaceJudge) decideAccess(hr engine.HeldReader, sp *space.History, v *record.Version, c engine.Checked) (engine.Decision, error) {
	ch, err := space.ReadChange(sp.Genesis(), v, c.Root, j.env())
	if err != nil {
		return refused(err)
	}
	res, err := sp.Add(ch)
	var m *space.MissingError
	if errors.As(err, &m) {
		return j.missing(hr, v, m)
	}
	if err != nil {
		return refused(err)
	}
	j.pending[v.ID] = res
	if !res.Counts {
		if from, forked := sp.Now().ForkedFrom(ch.Author, ch.Collection); forked && ch.LogN >= from {
			return engine.Decision{Verdict: engine.Withdrawn, Refusal: &record.Refusal{Code: space.CodeWithdrawnForked, Field: "log",
				Message: fmt.Sprintf("the line of %s in %s is proven forked from place %d, and this change is at place %d (02 §4.10)", ch.Author, ch.Collection, from, ch.LogN)}}, nil
		}
		return engine.Decision{Verdict: engine.Withdrawn, Refusal: &record.Refusal{Code: space.CodeWithdrawnStruck, Field: "seen",
			Message: "a change it had not seen took from its author what it used, or one it rests on was struck (docs/spaces.md, The merge rule)"}}, nil
	}
	return engine.Decision{Verdict: engine.Stands}, nil
}

// request is what v asks of the access state: its root's membership and a
// grant for what it does (02 §9.4 step 3; §7.2: membership alone in a sys.*
// collection outside the access history).
func (j *SpaceJudge) request(hr engine.HeldReader, spaceID string, v *record.Version, root string) (space.Request, error) {
	r := space.Request{Root: root, Author: v.Author, Collection: v.Collection, Log: v.Log}
	if record.IsSys(v.Collection) {
		return r, nil
	}
	byCreator := true
	if v.Seq > 0 {
		first, err := j.rootOf(hr, v)
		if err != nil {
			return r, err
		}
		byCreator = first == root
	}
	r.Inv = record.InvocationOf(v, spaceID, &byCreator)
	return r, nil
}

// rootOf is the root of v's first version: its note's issuer, or its
// author.
func (j *SpaceJudge) rootOf(hr engine.HeldReader, v *record.Version) (string, error) {
	id := v.Genesis
	if r, ok := j.roots[id]; ok {
		return r, nil
	}
	d, _ := v.GenesisDigest()
	g, ok, err := hr.Held(d)
	if err != nil || !ok {
		return "", fmt.Errorf("minca/judge: the first version %s is not held: %v", id, err)
	}
	root := g.Author
	if g.Proof != nil {
		if j.Base.Notes == nil {
			return "", errors.New("minca/judge: no note checker")
		}
		if root, err = j.Base.Notes.CheckNote(g.Proof, g.Author, nil, nil); err != nil {
			return "", fmt.Errorf("minca/judge: the note of held version %s: %w", id, err)
		}
	}
	if len(j.roots) > 1<<16 {
		clear(j.roots)
	}
	j.roots[id] = root
	return root, nil
}

// decideVersion judges a version outside the access history: §9.4 steps 2–5
// as of its seen, then whether a change it had not seen took it away.
func (j *SpaceJudge) decideVersion(hr engine.HeldReader, sp *space.History, v *record.Version, c engine.Checked) (engine.Decision, error) {
	st, err := sp.At(v.Seen)
	if err != nil {
		// m only on this path: its address escapes.
		var m *space.MissingError
		if errors.As(err, &m) {
			return j.missing(hr, v, m)
		}
		return engine.Decision{}, err
	}
	req, err := j.request(hr, sp.Genesis().ID, v, c.Root)
	if err != nil {
		return engine.Decision{}, err
	}
	in, contested := st.InForce(v.Collection)
	// Step 2: the onePer key form; a contested collection with none in force.
	if err := collection.CheckKeyForm(v, in); err != nil {
		return refused(err)
	}
	if contested {
		return refusedBy(&record.Refusal{Code: space.CodeStandingContested, Field: "collection",
			Message: v.Collection + " is contested with no definition in force as of seen: no one writes in it until a change settles it (02 §6.3)"}), nil
	}
	// Step 3: membership and grant, the access history's judgement of the
	// writer, final.
	if r := st.Judge(req); r != nil {
		return refusedBy(r), nil
	}
	if err := collection.CheckFinal(v, in); err != nil {
		return refused(err)
	}
	// Steps 4–5: tags; retain, onePer, fixed.
	if err := j.rules(hr, sp.Genesis(), v, c.Root, in); err != nil {
		return refused(err)
	}
	// Withdrawn: only the access history's judgement fails, on changes it
	// had not seen (§9.4 last paragraph). As of every change held, it has
	// just been made.
	if st.IsNow() {
		return engine.Decision{Verdict: engine.Stands}, nil
	}
	if r := sp.JudgeStored(req, v.Seen); r != nil {
		return engine.Decision{Verdict: engine.Withdrawn, Refusal: withdrawnBy(r)}, nil
	}
	return engine.Decision{Verdict: engine.Stands}, nil
}

// rules makes 02 §9.4 steps 4 and 5 with collection's checks: in a public
// space with the bodies at hand; a peer that can't read a private body
// skips what needs it (§7.3, §8.4).
func (j *SpaceJudge) rules(hr engine.HeldReader, g *space.Genesis, v *record.Version, root string, in collection.InForce) error {
	if in.Def == nil {
		return nil // no rules in force, or none this peer can read (§7.2)
	}
	c := content(g, v)
	var tagKey *collection.TagKey
	var oneKey *collection.OneKey
	if !g.Private() {
		pk, ok := j.keys[g.ID]
		if !ok {
			pk = &publicKeys{tag: collection.PublicTagKey(g.ID), one: collection.PublicOneKey(g.ID)}
			j.keys[g.ID] = pk
		}
		tagKey, oneKey = &pk.tag, &pk.one
	}
	if err := collection.CheckTags(v, c, tagKey, in); err != nil {
		return err
	}
	if err := collection.CheckRetain(v, in); err != nil {
		return err
	}
	if err := collection.CheckOnePer(v, root, c, oneKey, in); err != nil {
		return err
	}
	var first *record.Version
	var firstC *collection.Content
	if v.Seq > 0 && len(in.Def.Rules.Fixed) > 0 {
		if l, ok := hr.(engine.Lister); ok {
			genesis, _ := v.GenesisDigest()
			f, held, err := l.HeldAsIs(genesis)
			if err != nil {
				return err
			}
			if held {
				first, firstC = f, content(g, f)
			}
		}
	}
	return collection.CheckFixed(v, c, first, firstC, in)
}

// publicKeys are a public space's keys for tags and onePer (02 §7.3, §8.2),
// derived once.
type publicKeys struct {
	tag collection.TagKey
	one collection.OneKey
}

// content is a version's content as this peer reads it: in a public space
// its body and links; nil for a stub, and in a private space, whose bodies
// this judge can't open.
func content(g *space.Genesis, v *record.Version) *collection.Content {
	if g.Private() {
		return nil
	}
	return collection.PublicContent(v)
}

// Restand re-judges, in the batch that stores an access change, the
// stored versions it affects (engine.Restander): the access changes whose
// counting it changed, and the versions of the roots, keys and lines whose
// standing the state now may judge differently, both ways.
func (j *SpaceJudge) Restand(hr engine.HeldReader, v *record.Version, verdict engine.Verdict) ([]engine.Restanding, error) {
	j.lock()
	defer j.mu.Unlock()
	res, ok := j.pending[v.ID]
	if !ok {
		return nil, nil
	}
	delete(j.pending, v.ID)
	var out []engine.Restanding
	for _, f := range res.Flipped {
		out = append(out, engine.Restanding{ID: f.ID, To: standingOf(f.Counts)})
	}
	if res.Affected.Empty() {
		return out, nil
	}
	l, ok := hr.(engine.Lister)
	if !ok {
		return nil, errors.New("minca/judge: the store's reader lists no versions by root")
	}
	sp := j.spaces[v.Space]
	vd, _ := v.Digest()
	done := map[canonical.ID]bool{vd: true}
	judge := func(root string, keep func(*record.Version) bool) error {
		var ids []canonical.ID
		if err := l.ByRoot(v.Space, root, func(id canonical.ID) bool { ids = append(ids, id); return true }); err != nil {
			return err
		}
		for _, id := range ids {
			if done[id] {
				continue
			}
			held, ok, err := l.HeldAsIs(id)
			if err != nil || !ok {
				return err
			}
			if space.IsAccessCollection(held.Collection) || !keep(held) {
				continue
			}
			done[id] = true
			req, err := j.request(hr, v.Space, held, root)
			if err != nil {
				return err
			}
			to := standingOf(sp.JudgeStored(req, held.Seen) == nil)
			cur, _, err := hr.Standing(id)
			if err != nil {
				return err
			}
			if cur != to {
				out = append(out, engine.Restanding{ID: id, To: to})
			}
		}
		return nil
	}
	all := func(*record.Version) bool { return true }
	for _, r := range res.Affected.Roots {
		if err := judge(r, all); err != nil {
			return nil, err
		}
	}
	for _, k := range res.Affected.Revoked {
		if err := judge(k.Root, func(x *record.Version) bool { return x.Author == k.Key }); err != nil {
			return nil, err
		}
	}
	for _, f := range res.Affected.Forked {
		for _, r := range f.Roots {
			if err := judge(r, func(x *record.Version) bool { return x.Author == f.Author && x.Collection == f.Collection }); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(out, func(a, b engine.Restanding) int { return a.ID.Compare(b.ID) })
	return out, nil
}

func standingOf(counts bool) engine.Verdict {
	if counts {
		return engine.Stands
	}
	return engine.Withdrawn
}

// withdrawnBy turns what the state now refuses into why a stored version
// is withdrawn.
func withdrawnBy(r *record.Refusal) *record.Refusal {
	code := space.CodeWithdrawnGrant
	switch r.Code {
	case space.CodeStandingMember:
		code = space.CodeWithdrawnMember
	case space.CodeStandingRevoked:
		code = space.CodeWithdrawnRevoked
	case space.CodeStandingForked:
		code = space.CodeWithdrawnForked
	}
	return &record.Refusal{Code: code, Field: r.Field, Message: "a change it had not seen took it away: " + r.Message + " (02 §9.4)"}
}

func refusedBy(r *record.Refusal) engine.Decision {
	return engine.Decision{Verdict: engine.Refused, Refusal: r}
}
