package space

import (
	"errors"
	"fmt"
	"github.com/minca-go/minca/canonical"
	"slices"
	"strings"
)

// History is one space's access history and its replay (docs/spaces.md,
// The replay): the access changes held, the order they were added in
// (always one where a change comes after everything it saw), which of them
// count, and states as of any set of them, cached and extended as changes
// arrive. It is not safe for concurrent use; the node's judge serializes.
//
// Which changes count is a function of the changes alone — the graph their
// seen makes and what they say — never of the order they were added in or
// of their ids (docs/spaces.md, The merge rule): the arrival order is only
// how the replay is computed.
type History struct {
	g     *Genesis
	env   Env
	nodes []*node
	byID  map[string]*node
	regs  map[string][]*node
	heads []*node
	// struck holds the places of the changes that do not count now,
	// sorted; everStruck every change that ever stopped counting, for
	// states as of an earlier point.
	struck     []int32
	everStruck []*node
	// keeping lists the changes that keep anything (docs/spaces.md, What a
	// change keeps).
	keeping []*node
	// proofs counts the sys.fork changes held: until there is one, no
	// change's line is forked.
	proofs int

	now *view
	// nowState is the State of now, made once for each now: a version
	// judged as of every change held (most are) takes it, not a new one.
	nowState *State
	views    map[string]*view
	// names holds one copy of each register name changes read, so that a
	// name many changes read is kept once.
	names map[string]string
}

// node is a change in the history.
type node struct {
	*Change
	pos   int32
	seen  []*node
	anc   ancestry
	reads []string // the registers its judgement as of its seen read
	// strikers are the concurrent changes that take from it what it used
	// (docs/spaces.md, The merge rule); strikes the ones it takes from.
	strikers []*node
	strikes  []*node
	counts   bool
	flips    []flip
}

// flip records that a change's counting changed once the history held at
// changes.
type flip struct {
	at     int32
	counts bool
}

// maxViews bounds the states kept for sets of changes other than the
// whole history.
const maxViews = 512

// NewHistory starts the history of the space g: the genesis alone.
func NewHistory(g *Genesis, env Env) *History {
	h := &History{g: g, env: env, byID: map[string]*node{}, regs: map[string][]*node{}, views: map[string]*view{}, names: map[string]string{}}
	h.now = h.newView(ancestry{}, true, nil)
	return h
}

// Genesis is the space's genesis.
func (h *History) Genesis() *Genesis { return h.g }

// Env is what the history reads changes with.
func (h *History) Env() Env { return h.env }

// Len is how many changes the history holds.
func (h *History) Len() int { return len(h.nodes) }

// Has reports whether the history holds the change with this id.
func (h *History) Has(id string) bool { _, ok := h.byID[id]; return ok }

// Change returns a held change, and whether it counts now.
func (h *History) Change(id string) (*Change, bool, bool) {
	n, ok := h.byID[id]
	if !ok {
		return nil, false, false
	}
	return n.Change, n.counts, true
}

// Heads are the latest changes: what a new change's seen names (02 §3.1).
func (h *History) Heads() []string {
	out := make([]string, len(h.heads))
	for i, n := range h.heads {
		out[i] = n.ID
	}
	slices.Sort(out)
	return out
}

// Changes lists the held changes in the order they were added, each with
// whether it counts now.
func (h *History) Changes(yield func(c *Change, counts bool) bool) {
	for _, n := range h.nodes {
		if !yield(n.Change, n.counts) {
			return
		}
	}
}

// MissingError says which ids a set of changes names that the history does
// not hold: what a version naming them waits for (02 §9.5).
type MissingError struct{ IDs []string }

func (e *MissingError) Error() string {
	return "minca/space: the access changes " + strings.Join(e.IDs, ", ") + " are not held"
}

// closure resolves seen: the changes it names, ignoring the space's own id
// (the genesis, which every change comes after), or the ids not held.
func (h *History) closure(seen []string) ([]*node, error) {
	return h.closureTo(make([]*node, 0, len(seen)), seen)
}

// closureTo is closure appending to ns.
func (h *History) closureTo(ns []*node, seen []string) ([]*node, error) {
	var missing []string
	for _, id := range seen {
		if id == h.g.ID {
			continue
		}
		n, ok := h.byID[id]
		if !ok {
			if !slices.Contains(missing, id) {
				missing = append(missing, id)
			}
			continue
		}
		ns = append(ns, n)
	}
	if len(missing) > 0 {
		return nil, &MissingError{IDs: missing}
	}
	return ns, nil
}

// At returns the state as of seen: the replay of the changes it names and
// everything they saw (02 §3.1, docs/spaces.md). Absent seen is the genesis
// alone. A seen naming changes not held gives a *MissingError.
func (h *History) At(seen []string) (*State, error) {
	var buf [8]*node // seen names a space's few heads
	ns, err := h.closureTo(buf[:0], seen)
	if err != nil {
		return nil, err
	}
	if v := h.viewOf(closureOf(ns)); v != h.now {
		return &State{h: h, v: v}, nil
	}
	return h.Now(), nil
}

// Now is the state with every held change: what the history's own judgement
// of a stored version is made against (02 §9.4).
func (h *History) Now() *State {
	if s := h.nowState; s != nil && s.v == h.now {
		return s
	}
	h.nowState = &State{h: h, v: h.now}
	return h.nowState
}

// Check judges c as of its own seen (docs/spaces.md, Who may make a
// change): a *record.Refusal when its author could not make it, a
// *MissingError when its seen names changes not held, nil when it may be
// added. It changes nothing.
func (h *History) Check(c *Change) error {
	_, _, err := h.prepare(c)
	return err
}

func (h *History) prepare(c *Change) (*node, []*node, error) {
	if _, ok := h.byID[c.ID]; ok {
		return nil, nil, fmt.Errorf("minca/space: change %s is held already", c.ID)
	}
	seen, err := h.closure(c.Seen)
	if err != nil {
		return nil, nil, err
	}
	n := &node{Change: c, pos: int32(len(h.nodes)), anc: closureOf(seen), seen: seen}
	if r := h.admissible(n, h.viewOf(n.anc), &n.reads); r != nil {
		return nil, nil, r
	}
	return n, seen, nil
}

// Result is what adding a change did.
type Result struct {
	// Counts is whether the change counts in the replay of every change
	// held (stands), or not (withdrawn).
	Counts bool
	// Flipped lists the other changes whose counting changed, with how
	// they count now.
	Flipped []Flipped
	// Affected says whose stored versions the state now may judge
	// differently (02 §9.4): their standing must be judged again.
	Affected Affected
}

// Flipped is a change whose counting changed.
type Flipped struct {
	ID     canonical.ID
	Counts bool
}

// Affected names the stored versions a change to the state now may take
// away or give back: those by Roots, and by the revoked keys and forked
// lines named.
type Affected struct {
	Roots   []string
	Revoked []RevokedKey
	Forked  []ForkedLine
}

// Empty reports whether nothing is affected.
func (a Affected) Empty() bool { return len(a.Roots) == 0 && len(a.Revoked) == 0 && len(a.Forked) == 0 }

// RevokedKey is a key revoked for a root, with its cutoffs: per collection
// the last log place kept (06 §2.9); a collection not listed keeps none.
type RevokedKey struct {
	Key, Root string
	Cutoffs   map[string]int64
}

// ForkedLine is a writer's line proven forked from a place on (02 §4.10),
// with the roots its versions act for.
type ForkedLine struct {
	Author, Collection string
	From               int64
	Roots              []string
}

// Add judges c as of its own seen, as Check does, and adds it: the replay
// then says whether it counts, and which other changes' counting it
// changed (docs/spaces.md, The merge rule). Nothing changes when it returns
// an error.
func (h *History) Add(c *Change) (Result, error) {
	x, _, err := h.prepare(c)
	if err != nil {
		return Result{}, err
	}
	// Pairs with every change concurrent with x: who takes from whom.
	var forced []*node
	h.concurrentWith(x, func(o *node) {
		if h.undercuts(x, o) && !h.undercutsStar(o, x) {
			o.strikers = append(o.strikers, x)
			x.strikes = append(x.strikes, o)
			forced = append(forced, o)
		}
		if h.undercuts(o, x) && !h.undercutsStar(x, o) {
			x.strikers = append(x.strikers, o)
			o.strikes = append(o.strikes, x)
		}
	})
	h.nodes = append(h.nodes, x)
	h.byID[x.ID] = x
	h.regs[x.Register] = append(h.regs[x.Register], x)
	if len(x.Keep) > 0 {
		h.keeping = append(h.keeping, x)
	}
	if x.Kind == KindFork {
		// The proof withdraws every change of the line from its place on,
		// whatever it saw (02 §4.10).
		h.proofs++
		for _, o := range h.nodes[:x.pos] {
			if x.proves(o) {
				forced = append(forced, o)
			}
		}
	}
	heads := h.heads[:0:0]
	for _, hd := range h.heads {
		if !x.anc.has(hd.pos) {
			heads = append(heads, hd)
		}
	}
	h.heads = append(heads, x)
	at := int32(len(h.nodes))
	dirty := map[string]bool{}
	var flipped []*node
	if len(forced) > 0 {
		from := x.pos
		for _, o := range forced {
			from = min(from, o.pos)
		}
		flipped = h.recompute(from, x.pos, at)
	}
	x.counts = h.countsNow(x)
	x.flips = []flip{{at: at, counts: x.counts}}
	if !x.counts {
		h.setStruck(x, true)
	}
	h.now = h.newView(ancestry{prefix: at}, true, nil)
	if x.counts || x.Kind == KindFork {
		dirty[x.Register] = true
	}
	res := Result{Counts: x.counts}
	for _, o := range flipped {
		dirty[o.Register] = true
		res.Flipped = append(res.Flipped, Flipped{ID: o.Digest, Counts: o.counts})
	}
	res.Affected = h.affected(dirty)
	return res, nil
}

// intern returns the history's copy of a register name.
func (h *History) intern(s string) string {
	if c, ok := h.names[s]; ok {
		return c
	}
	h.names[s] = s
	return s
}

// concurrentWith calls fn for each held change that x did not see (x is
// not held yet, so none saw x).
func (h *History) concurrentWith(x *node, fn func(o *node)) {
	for p := x.anc.prefix; p < int32(len(h.nodes)); p++ {
		if !x.anc.has(p) {
			fn(h.nodes[p])
		}
	}
}

// recompute judges again, in order, the changes from place from on
// (below end: x is judged by the caller), as the replay now says, and
// returns those whose counting changed. at is the history's size the
// changes are recorded under.
func (h *History) recompute(from, end, at int32) []*node {
	var out []*node
	for p := from; p < end; p++ {
		w := h.nodes[p]
		c := h.countsNow(w)
		if c == w.counts {
			continue
		}
		w.counts = c
		w.flips = append(w.flips, flip{at: at, counts: c})
		h.setStruck(w, !c)
		out = append(out, w)
	}
	return out
}

// countsNow is the merge rule for a held change against every change held
// (docs/spaces.md, The merge rule): it counts unless a concurrent change
// takes from it what it used, or what it rests on — the changes it saw —
// no longer lets its author make it.
func (h *History) countsNow(w *node) bool {
	if len(w.strikers) > 0 || h.forkedOut(w, func(*node) bool { return true }) {
		return false
	}
	if !h.anyStruck(w.anc, h.struck) {
		// Every change w saw counts, so the state as of its seen is the one
		// it was judged against when it was added.
		return true
	}
	return h.admissible(w, h.newView(w.anc, false, func(n *node) bool { return n.counts }), nil) == nil
}

// forkedOut reports whether a proof among the held changes in the set
// proves w's line forked at or before w: then w does not count, whatever
// the proof saw (02 §4.10: "every version that key signed in that
// collection … at the proven place or after it is withdrawn …, whichever
// branch it is on"; "a fork proven by anyone is proven to everyone"). A
// proof proves whether or not it counts itself: its two versions are
// checked by anyone, and nothing it rests on can make them agree. So what
// a proof withdraws never depends on what it saw, nor on which changes
// count, and the rule stays well founded.
func (h *History) forkedOut(w *node, in func(*node) bool) bool {
	if h.proofs == 0 {
		return false
	}
	for _, f := range h.regs[lineRegister(w.Author, w.Collection)] {
		if f.proves(w) && in(f) {
			return true
		}
	}
	return false
}

// proves reports whether a proof takes n away: n is in the line it proves,
// at or after the proven place.
func (f *node) proves(n *node) bool {
	return f.Kind == KindFork && n.Author == f.ForkAuthor && n.Collection == f.ForkCollection && n.LogN >= f.ForkFrom
}

// lineRegister is the register of the proofs of a writer's line.
func lineRegister(author, coll string) string { return "fork:" + author + "\n" + coll }

func (h *History) anyStruck(a ancestry, struck []int32) bool {
	for _, p := range struck {
		if p >= a.top() {
			return false
		}
		if a.has(p) {
			return true
		}
	}
	return false
}

func (h *History) setStruck(n *node, struck bool) {
	i, found := slices.BinarySearch(h.struck, n.pos)
	switch {
	case struck && !found:
		h.struck = slices.Insert(h.struck, i, n.pos)
		if !slices.Contains(h.everStruck, n) {
			h.everStruck = append(h.everStruck, n)
		}
	case !struck && found:
		h.struck = slices.Delete(h.struck, i, i+1)
	}
}

// countedAt is whether n counted once the history held at changes: the
// replay of the first at changes added.
func countedAt(n *node, at int32) bool {
	c := n.flips[0].counts
	for _, f := range n.flips[1:] {
		if f.at > at {
			break
		}
		c = f.counts
	}
	return c
}

// undercuts reports whether d, concurrent with c, takes from c what c
// used: whether c's author could not have made c had it seen d (docs/
// spaces.md, The merge rule). Only a change to a register c's judgement
// read can.
func (h *History) undercuts(d, c *node) bool {
	if !slices.Contains(c.reads, d.Register) {
		return false
	}
	return h.admissible(c, h.viewOf(c.anc).with(d), nil) != nil
}

// undercutsStar reports whether c undercuts d or anything d rests on that c
// did not see: then d does not strike c, and a pair that take from each
// other both count (least privilege; docs/spaces.md).
func (h *History) undercutsStar(c, d *node) bool {
	if h.undercuts(c, d) {
		return true
	}
	check := func(p int32) bool {
		if c.anc.has(p) || p == c.pos {
			return false
		}
		return h.undercuts(c, h.nodes[p])
	}
	for p := c.anc.prefix; p < d.anc.prefix; p++ {
		if check(p) {
			return true
		}
	}
	for _, p := range d.anc.extra {
		if check(p) {
			return true
		}
	}
	return false
}

// affected turns the registers whose value now changed into whose stored
// versions to judge again.
func (h *History) affected(dirty map[string]bool) Affected {
	var a Affected
	roots := map[string]bool{}
	regs := make([]string, 0, len(dirty))
	for r := range dirty {
		regs = append(regs, r)
	}
	slices.Sort(regs)
	for _, r := range regs {
		switch {
		case strings.HasPrefix(r, "member:"):
			roots[r[len("member:"):]] = true
		case strings.HasPrefix(r, "founder:"):
			roots[r[len("founder:"):]] = true
		case strings.HasPrefix(r, "role:"):
			// Whoever held the role at any point: a version is judged as of
			// its seen and the changes it had not seen (JudgeStored), so a
			// member who holds it no longer may have versions that rest on
			// it.
			name := r[len("role:"):]
			for reg, ns := range h.regs {
				m, ok := strings.CutPrefix(reg, "member:")
				if !ok {
					continue
				}
				for _, n := range ns {
					if slices.Contains(n.Roles, name) {
						roots[m] = true
						break
					}
				}
			}
		case strings.HasPrefix(r, "revoke:"):
			key, root, _ := strings.Cut(r[len("revoke:"):], "|")
			cut, _ := h.now.revoked(key, root)
			a.Revoked = append(a.Revoked, RevokedKey{Key: key, Root: root, Cutoffs: cut})
		case strings.HasPrefix(r, "fork:"):
			author, coll, _ := strings.Cut(r[len("fork:"):], "\n")
			from, _ := h.now.forked(author, coll)
			var rs []string
			for _, n := range h.regs[r] {
				rs = append(rs, n.ForkRoots...)
			}
			slices.Sort(rs)
			a.Forked = append(a.Forked, ForkedLine{Author: author, Collection: coll, From: from, Roots: slices.Compact(rs)})
		}
	}
	for r := range roots {
		a.Roots = append(a.Roots, r)
	}
	slices.Sort(a.Roots)
	return a
}

// ErrNotHeld is returned for a change the history does not hold.
var ErrNotHeld = errors.New("minca/space: no such access change")
