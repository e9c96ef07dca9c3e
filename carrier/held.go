package carrier

import (
	"context"
	"fmt"
	"github.com/minca-go/minca/carry"
	"maps"
	"slices"
	"sync"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/transport"
)

// CodeNotCarried: a version of a space the carrier does not carry; it
// takes none in, so no peer can fill its store with what no account asked
// it to keep.
const CodeNotCarried = "carrier/not-carried"

// Admit takes versions in through the judge and reads the carry spaces
// they touch at once. A version of a space the carrier does not carry is
// refused (CodeNotCarried). Sync sessions may admit into Store directly:
// the carrier follows its store's events either way (watch), reading a
// carry space after anything arrives in it and matching each version of a
// carried space that comes to stand against the wakes (06 §4.4).
func (c *Carrier) Admit(ctx context.Context, from string, vs []*record.Version) ([]engine.Outcome, error) {
	carry, carried := c.sets()
	outs := make([]engine.Outcome, len(vs))
	var in []*record.Version
	var idx []int
	for i, v := range vs {
		if !carry[v.Space] && !carried[v.Space] {
			outs[i] = engine.Outcome{ID: v.ID, Verdict: engine.Refused, Refusal: &record.Refusal{Code: CodeNotCarried, Field: "space",
				Message: "the carrier does not carry the space " + v.Space}}
			continue
		}
		in = append(in, v)
		idx = append(idx, i)
	}
	if len(in) == 0 {
		return outs, nil
	}
	got, err := c.st.Admit(ctx, from, in)
	if err != nil {
		return nil, err
	}
	touched := map[string]bool{}
	for k, o := range got {
		outs[idx[k]] = o
		if carry[in[k].Space] {
			touched[in[k].Space] = true
		}
	}
	for _, id := range slices.Sorted(maps.Keys(touched)) {
		if err := c.read(ctx, id); err != nil {
			return outs, err
		}
	}
	return outs, nil
}

// MaxWakes bounds the wakes a carrier matches for one account (by key
// order): every version of a carried space is matched against each.
const MaxWakes = 256

// watchBuffer bounds the store events the carrier has not read yet.
const watchBuffer = 4096

// watch follows the store's events until ctx ends: after each burst it
// reads the carry spaces that changed, and a version of a carried space
// newly standing is matched against the wakes. When events were lost it
// reads every carry space again (wakes lost with them are not reported).
func (c *Carrier) watch(ctx context.Context, sub *engine.Subscription) {
	defer sub.Close()
	var dropped int64
	for {
		var burst []engine.Event
		select {
		case <-ctx.Done():
			return
		case e := <-sub.Events():
			burst = append(burst, e)
		}
	more:
		for len(burst) < watchBuffer {
			select {
			case e := <-sub.Events():
				burst = append(burst, e)
			default:
				break more
			}
		}
		carry, carried := c.sets()
		touched := map[string]bool{}
		if d := sub.Dropped(); d != dropped {
			dropped = d
			c.o.Logger.Warn("the carrier fell behind its store's events", "dropped", d)
			touched = carry
		}
		for _, e := range burst {
			switch {
			case carry[e.Space]:
				touched[e.Space] = true
			case carried[e.Space] && e.Kind == engine.EventAdmitted && e.Verdict == engine.Stands:
				if v, err := c.st.Version(ctx, e.Change.ID); err == nil {
					c.match(v)
				}
			}
		}
		for _, id := range slices.Sorted(maps.Keys(touched)) {
			if err := c.read(ctx, id); err != nil && ctx.Err() == nil {
				c.o.Logger.Warn("reading a carry space", "space", id, "err", err)
			}
		}
	}
}

// sets are the carry spaces and the spaces carried now.
func (c *Carrier) sets() (carry, carried map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	carry, carried = map[string]bool{}, map[string]bool{}
	for id, a := range c.accounts {
		carry[id] = true
		for s := range a.passes {
			carried[s] = true
		}
	}
	return carry, carried
}

// match reports each wake a version of a carried space matches, from its
// outside alone: space, collection and root. A version is matched once.
func (c *Carrier) match(v *record.Version) {
	if !c.matched.add(v.ID) {
		return
	}
	root := v.Author
	if v.Proof != nil {
		r, err := c.notes.CheckNote(v.Proof, v.Author, nil, nil)
		if err != nil {
			return // it stood, so its note checked; nothing to match otherwise
		}
		root = r
	}
	var evs []Event
	c.mu.Lock()
	for _, a := range c.accounts {
		if _, ok := a.passes[v.Space]; !ok {
			continue
		}
		for _, w := range a.wakes {
			if w.Matches(v, root, a.grant.DID) {
				evs = append(evs, Event{Type: EventWake, Account: a.grant.DID, Space: v.Space, Collection: v.Collection,
					Open: w.Open, Wake: w.Name, Version: v.ID})
			}
		}
	}
	c.mu.Unlock()
	for _, e := range evs {
		c.hub.send(e)
	}
}

// read reads a carry space: carry:closed, then its passes and wakes. Only
// records standing in the account's own carry space count: the judge let
// none in but the account's, under a note granting /account/write.
func (c *Carrier) read(ctx context.Context, carryID string) error {
	c.scan.Lock()
	defer c.scan.Unlock()
	c.mu.Lock()
	a := c.accounts[carryID]
	c.mu.Unlock()
	if a == nil {
		return nil
	}
	recs, err := carry.Current(ctx, c.st, carryID, carry.PassCollection)
	if err != nil {
		return err
	}
	if v, ok := recs[carry.ClosedKey]; ok && closed(a, v) {
		return c.forget(carryID, a)
	}
	passes := map[string]*carry.Pass{}
	for key, v := range recs {
		if key == carry.ClosedKey {
			continue
		}
		o, err := a.ring.OpenVersion(v)
		if err != nil || o == nil {
			c.o.Logger.Warn("a pass that does not open", "carry", carryID, "key", key, "err", err)
			continue
		}
		p, err := carry.ReadPass(key, o.Body)
		if err != nil {
			c.o.Logger.Warn("a pass the carrier does not accept", "carry", carryID, "key", key, "err", err)
			continue
		}
		passes[p.Genesis.ID] = p
	}
	wrecs, err := carry.Current(ctx, c.st, carryID, carry.WakeCollection)
	if err != nil {
		return err
	}
	var wakes []carry.Wake
	for _, key := range slices.Sorted(maps.Keys(wrecs)) {
		o, err := a.ring.OpenVersion(wrecs[key])
		if err != nil || o == nil {
			continue
		}
		if w, err := carry.ReadWake(o.Body); err == nil {
			if len(wakes) == MaxWakes {
				c.o.Logger.Warn("more wakes than a carrier matches; the rest are ignored", "carry", carryID, "max", MaxWakes)
				break
			}
			wakes = append(wakes, w)
		}
	}
	for _, p := range passes {
		if _, ok, err := judge.GenesisOf(ctx, c.st, p.Genesis.ID); err != nil {
			return err
		} else if !ok {
			if err := judge.AddGenesis(ctx, c.st, p.Genesis); err != nil {
				return err
			}
		}
	}
	_, before := c.sets()
	c.mu.Lock()
	old := a.passes
	a.passes, a.wakes = passes, wakes
	c.mu.Unlock()
	_, after := c.sets()
	for _, id := range slices.Sorted(maps.Keys(passes)) {
		if _, had := old[id]; !had {
			c.hub.send(Event{Type: EventCarrying, Account: a.grant.DID, Space: id})
		}
	}
	c.dropped(before, after)
	if !maps.Equal(before, after) {
		c.signal()
	}
	return nil
}

// closed reports whether v is carry:closed: {"v": 1, "closed": true}.
func closed(a *account, v *record.Version) bool {
	o, err := a.ring.OpenVersion(v)
	if err != nil || o == nil {
		return false
	}
	return carry.IsClosed(o.Body)
}

// forget stops carrying for the account whose carry space says
// carry:closed (06 §4.2: the carrier "MUST stop carrying for it and forget
// what it held"): its grant, carry space key, passes and wakes go. What
// the store holds of spaces no other account names is no longer served
// or taken in.
func (c *Carrier) forget(carryID string, a *account) error {
	_, before := c.sets()
	c.mu.Lock()
	delete(c.accounts, carryID)
	c.mu.Unlock()
	_, after := c.sets()
	if err := c.writeGrants(); err != nil {
		return fmt.Errorf("minca/carrier: forgetting %s: %w", a.grant.DID, err)
	}
	c.hub.send(Event{Type: EventDisconnected, Account: a.grant.DID, Space: carryID})
	c.dropped(before, after)
	c.signal()
	return nil
}

func (c *Carrier) dropped(before, after map[string]bool) {
	for _, id := range slices.Sorted(maps.Keys(before)) {
		if !after[id] {
			c.hub.send(Event{Type: EventDropped, Space: id})
		}
	}
}

// signal tells whoever waits on Changed that the spaces carried changed.
func (c *Carrier) signal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.changed)
	c.changed = make(chan struct{})
}

// Changed is closed when the spaces the carrier holds next change: a
// grant taken, a pass added or gone, an account forgotten.
func (c *Carrier) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Accounts lists the accounts the carrier carries for, by DID.
func (c *Carrier) Accounts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, a := range c.accounts {
		if !slices.Contains(out, a.grant.DID) {
			out = append(out, a.grant.DID)
		}
	}
	slices.Sort(out)
	return out
}

// Spaces lists every space the carrier holds and syncs: its carry spaces
// and the spaces their passes name. (The shape of a sync host's Spaces.)
func (c *Carrier) Spaces(context.Context) ([]string, error) {
	return c.held(), nil
}

func (c *Carrier) held() []string {
	carry, carried := c.sets()
	maps.Copy(carry, carried)
	return slices.Sorted(maps.Keys(carry))
}

// MayRead says whether a peer may read a space from the carrier (docs/
// sync.md's read rule, as a node's): a carry space only the account's own
// devices (by the note's issuer); a carried public space any peer whose
// key is not revoked there, unless it is an account's own (a public
// registry of earlier mincas); a carried private or account space a
// member (by root) or a keeper the space names (by key), as of now. A space it does not hold
// nobody, so a peer asking learns nothing.
func (c *Carrier) MayRead(ctx context.Context, spaceID string, p transport.Peer) (bool, error) {
	carry, carried := c.sets()
	if carry[spaceID] {
		c.mu.Lock()
		a := c.accounts[spaceID]
		c.mu.Unlock()
		return a != nil && p.Root == a.grant.DID, nil
	}
	if !carried[spaceID] {
		return false, nil
	}
	may := false
	ok, err := c.judge.WithHistory(ctx, spaceID, func(h *space.History) error {
		st := h.Now()
		if slices.ContainsFunc(st.Revoked(), func(r space.RevokedKey) bool { return r.Key == p.DID }) {
			return nil
		}
		g := h.Genesis()
		may = !g.Private() && !g.Account || p.Root != "" && st.IsMember(p.Root) ||
			slices.ContainsFunc(st.Keepers(), func(k space.Keeper) bool { return k.DID == p.DID })
		return nil
	})
	return ok && may, err
}

// Carried lists the spaces the carrier carries for accounts: those a pass
// names.
func (c *Carrier) Carried() []string {
	_, carried := c.sets()
	return slices.Sorted(maps.Keys(carried))
}

// Relays lists the relays the carrier's grants name, each once.
func (c *Carrier) Relays() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, a := range c.accounts {
		for _, r := range a.grant.Relays {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}

// ReadKey is the key the carrier proves to peers of a private space it
// carries (06 §4.1): the read key of its pass, the one for a later key
// when two accounts name the space (06 §4.2). ok is false for a public
// space or one it does not carry.
func (c *Carrier) ReadKey(spaceID string) (*identity.PrivateKey, bool) {
	c.mu.Lock()
	var best *carry.Pass
	for _, id := range slices.Sorted(maps.Keys(c.accounts)) {
		p, ok := c.accounts[id].passes[spaceID]
		if !ok || p.Read == nil {
			continue
		}
		if best == nil || best.ReadKey == "" && p.ReadKey != "" {
			best = p
		}
	}
	c.mu.Unlock()
	if best == nil {
		return nil, false
	}
	k, err := best.ReadKeyPair()
	if err != nil {
		return nil, false
	}
	return k, true
}

// seenIDs remembers the last ids matched, so a version whose body arrives
// after its stub, or that is admitted twice, wakes once. Bounded.
type seenIDs struct {
	mu   sync.Mutex
	ids  map[string]bool
	ring []string
	next int
}

func newSeenIDs(n int) *seenIDs { return &seenIDs{ids: map[string]bool{}, ring: make([]string, n)} }

// add reports whether id is new, and remembers it.
func (s *seenIDs) add(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids[id] {
		return false
	}
	if old := s.ring[s.next]; old != "" {
		delete(s.ids, old)
	}
	s.ring[s.next], s.ids[id] = id, true
	s.next = (s.next + 1) % len(s.ring)
	return true
}
