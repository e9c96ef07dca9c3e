package connect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Reach is a key to revoke and where (06 §2.10): with scope account,
// wherever the account writes; with scope spaces, in each space it was
// granted that the account still writes in.
type Reach struct {
	Key     string
	Account bool     // scope account: everywhere the account writes
	Spaces  []string // scope spaces: the spaces granted
}

// AccountWrites is everywhere an account writes (06 §2.10): every space
// it lists, its carry spaces, the contacts space and the account registry.
// The node knows it; a revocation's reach is worked out against it.
type AccountWrites struct {
	Listed   []string // the spaces in the account's list (sys.joined)
	Carry    []string // its carry spaces (§4.2)
	Contacts string   // the contacts space; "" when none
	Registry string   // the account registry
}

func (w AccountWrites) all() []string {
	out := slices.Concat(w.Listed, w.Carry)
	for _, s := range []string{w.Contacts, w.Registry} {
		if s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Where lists the spaces to write the key's sys.revoke in (06 §2.10):
// with scope account every space in w; with scope spaces those granted
// that the account still writes in. Sorted, each once.
func (r Reach) Where(w AccountWrites) []string {
	all := w.all()
	if r.Account {
		return all
	}
	var out []string
	for _, s := range all {
		if slices.Contains(r.Spaces, s) {
			out = append(out, s)
		}
	}
	return out
}

// merge adds o's reach to r's (the same key): account covers all.
func (r *Reach) merge(o Reach) {
	r.Account = r.Account || o.Account
	r.Spaces = append(r.Spaces, o.Spaces...)
	slices.Sort(r.Spaces)
	r.Spaces = slices.Compact(r.Spaces)
}

// addReach adds a reach to a list, merged with an entry of the same key.
func addReach(list []Reach, r Reach) []Reach {
	for i := range list {
		if list[i].Key == r.Key {
			list[i].merge(r)
			return list
		}
	}
	r.Spaces = slices.Clone(r.Spaces)
	slices.Sort(r.Spaces)
	return append(list, r)
}

// HomeOptions configure a [Home].
type HomeOptions struct {
	// Origin is the home's own origin, which a program's proof by code
	// must name (06 §2.5, §3). Required.
	Origin string
	// SessionKey is the DID of the home's own session key: never granted
	// to a request, never revoked (§2.5, §2.10). Required.
	SessionKey string
	// Store keeps the connections. Required; a *MemStore for tests.
	Store Store
}

// Home is the account home's side of 06 §2.5 and §2.10: the checks a home
// MUST make of a request before granting it, and the connections it keeps
// and what disconnecting one revokes. It signs nothing and writes no
// record: the node makes spaces and invites, signs the grant
// ([IssueGrant]) and writes the revokes Disconnect names. Safe for
// concurrent use.
type Home struct {
	origin, session string
	store           Store
	mu              sync.Mutex
}

// NewHome makes a home's bookkeeping over opts.Store.
func NewHome(opts HomeOptions) (*Home, error) {
	if _, err := ParseOrigin(opts.Origin); err != nil {
		return nil, fmt.Errorf("minca/connect: the home's origin: %w", err)
	}
	if opts.SessionKey == "" || opts.Store == nil {
		return nil, errors.New("minca/connect: a home needs its session key and a store")
	}
	return &Home{origin: opts.Origin, session: opts.SessionKey, store: opts.Store}, nil
}

// Origin is the home's own origin.
func (h *Home) Origin() string { return h.origin }

// Connections returns the connections the home keeps.
func (h *Home) Connections(ctx context.Context) ([]Connection, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.store.Connections(ctx)
}

// Check makes the checks a home MUST make of a request from origin before
// it grants it (06 §2.5, §2.10): the proof verifies under the audience over
// the statement of §2.4 (with via code, naming this home's origin); the
// audience is not the home's own session key; no connection of another
// origin, or of another via, holds it or replaced it; and it is not
// connected as the other kind (an app's or program's key as a carrier, or
// back). origin is the event's origin for an app or a carrier, and ""
// for a request the home made for a program by code. A refusal is a
// *Refusal.
func (h *Home) Check(ctx context.Context, r *ConnectRequest, origin string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.check(ctx, r, origin)
	return err
}

func (h *Home) check(ctx context.Context, r *ConnectRequest, origin string) ([]Connection, error) {
	if KindOf(r) == KindCode {
		origin = "" // a program by code has no origin; it is kept by its key
	}
	if err := r.KeyProof(h.origin).Check(r.Proof); err != nil {
		return nil, err
	}
	if r.Audience == h.session {
		return nil, refuse(CodeHomeOwnKey, "audience", "the audience is the home's own session key (06 §2.5)")
	}
	conns, err := h.store.Connections(ctx)
	if err != nil {
		return nil, fmt.Errorf("minca/connect: reading the home's connections: %w", err)
	}
	kind := KindOf(r)
	for i := range conns {
		c := &conns[i]
		if !c.holds(r.Audience) {
			continue
		}
		if (c.Kind == KindCarrier) != (kind == KindCarrier) {
			return nil, refuse(CodeHomeOtherKind, "audience", fmt.Sprintf("the key is connected as %s; one key is never both an app and a carrier (06 §2.10)", describeKind(c)))
		}
		if c.Kind != kind || c.Origin != origin {
			return nil, refuse(CodeHomeKeyHeld, "audience", fmt.Sprintf("the key is held by %s; a request must never name a key another connection holds (06 §2.5, §2.10)", describeKind(c)))
		}
	}
	return conns, nil
}

func describeKind(c *Connection) string {
	switch c.Kind {
	case KindApp:
		return "the app at " + c.Origin
	case KindCode:
		return "a program connected by code"
	}
	return "the carrier from " + c.Origin
}

// Granted is what a grant gave, for the home to remember (06 §2.5 step 6).
type Granted struct {
	Spaces        []string // the spaces granted
	ContactsSpace string   // which of them is the contacts space, if any
	ExpiresAt     int64
}

// GrantedBy is what g gave.
func GrantedBy(g *Grant) Granted {
	ids := make([]string, len(g.Spaces))
	for i, s := range g.Spaces {
		ids[i] = s.ID
	}
	return Granted{Spaces: ids, ContactsSpace: g.ContactsSpace, ExpiresAt: g.ExpiresAt}
}

// Remembered is what remembering a connection changed.
type Remembered struct {
	Connection Connection
	// Replaced is the connection it replaced, if any: an app's at the
	// same origin, or an earlier grant to the same key by code or carrier.
	Replaced *Connection
	// RemovedCarriers are earlier carriers from the same origin with
	// another key (§4.3), which the node removes (§4.2).
	RemovedCarriers []Connection
}

// Remember keeps the connection a granted request made (06 §2.5 step 6,
// §2.10, §4.3), making [Home.Check]'s checks again under the same lock so
// two grants at once cannot both take one key: the home sends the grant
// only once Remember has returned. Connecting an app's origin again
// replaces its connection and keeps the old key, if it could write, with
// the reach it was granted; connecting a program's key again by code
// replaces that key's connection the same way; a carrier replaces only an
// earlier carrier from its origin, never an app's connection. Nothing is
// revoked. g is the zero Granted for a carrier.
func (h *Home) Remember(ctx context.Context, r *ConnectRequest, origin string, g Granted) (Remembered, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	conns, err := h.check(ctx, r, origin)
	if err != nil {
		return Remembered{}, err
	}
	if KindOf(r) == KindCode {
		origin = ""
	}
	c := Connection{Kind: KindOf(r), Origin: origin, Audience: r.Audience, Name: r.Name, Access: r.Access,
		RecordsOnly: r.RecordsOnly}
	if c.Kind != KindCarrier {
		c.Scope, c.Spaces, c.ContactsSpace, c.ExpiresAt = r.Scope, slices.Clone(g.Spaces), g.ContactsSpace, g.ExpiresAt
	}
	var out Remembered
	var remove []string
	for i := range conns {
		old := &conns[i]
		switch {
		case old.ID() == c.ID():
			out.Replaced = old
			for _, rr := range old.Replaced {
				c.Replaced = addReach(c.Replaced, rr)
			}
			if rr, ok := old.reach(); ok {
				c.Replaced = addReach(c.Replaced, rr)
			}
		case c.Kind == KindCarrier && old.Kind == KindCarrier && old.Origin == origin:
			out.RemovedCarriers = append(out.RemovedCarriers, *old)
			remove = append(remove, old.ID())
		}
	}
	if err := h.store.Apply(ctx, []Connection{c}, remove); err != nil {
		return Remembered{}, fmt.Errorf("minca/connect: remembering the connection: %w", err)
	}
	out.Connection = c
	return out, nil
}

// Disconnected is what disconnecting removed, and the keys to revoke.
type Disconnected struct {
	Connection Connection
	// Revoke is every key to revoke, each with where it was granted
	// (06 §2.10): the connection's own key when it had access write, and
	// every key it replaced; never the home's own session key. Empty for
	// a carrier, which holds no note: disconnecting it removes it (§4.2).
	Revoke []Reach
}

// ErrNotConnected is returned by Disconnect for a connection the home does
// not keep.
var ErrNotConnected = errors.New("minca/connect: no such connection")

// DisconnectApp disconnects the app at origin (06 §2.10), leaving a
// carrier at that origin and programs connected by code. The node writes
// a sys.revoke for each key in Revoke where [Reach.Where] says, and
// removes the account's automations whose app.origin is origin and every
// one with a version one of those keys signed (§2.11, §4.4).
func (h *Home) DisconnectApp(ctx context.Context, origin string) (Disconnected, error) {
	return h.disconnect(ctx, (&Connection{Kind: KindApp, Origin: origin}).ID())
}

// DisconnectKey disconnects the program connected by code, or the carrier,
// that holds key (06 §2.10: "a carrier is disconnected by its key").
func (h *Home) DisconnectKey(ctx context.Context, key string) (Disconnected, error) {
	d, err := h.disconnect(ctx, (&Connection{Kind: KindCode, Audience: key}).ID())
	if errors.Is(err, ErrNotConnected) {
		d, err = h.disconnect(ctx, (&Connection{Kind: KindCarrier, Audience: key}).ID())
	}
	if errors.Is(err, ErrNotConnected) {
		return d, fmt.Errorf("%w holding the key %s (a program connected by code, or a carrier)", ErrNotConnected, key)
	}
	return d, err
}

func (h *Home) disconnect(ctx context.Context, id string) (Disconnected, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	conns, err := h.store.Connections(ctx)
	if err != nil {
		return Disconnected{}, fmt.Errorf("minca/connect: reading the home's connections: %w", err)
	}
	for i := range conns {
		c := conns[i]
		if c.ID() != id {
			continue
		}
		var revoke []Reach
		if r, ok := c.reach(); ok {
			revoke = addReach(revoke, r)
		}
		for _, r := range c.Replaced {
			revoke = addReach(revoke, r)
		}
		revoke = slices.DeleteFunc(revoke, func(r Reach) bool { return r.Key == h.session })
		if err := h.store.Apply(ctx, nil, []string{id}); err != nil {
			return Disconnected{}, fmt.Errorf("minca/connect: removing the connection: %w", err)
		}
		return Disconnected{Connection: c, Revoke: revoke}, nil
	}
	return Disconnected{}, fmt.Errorf("%w: %s", ErrNotConnected, id)
}

// ProposalReach is what an app may propose automations about (06 §2.11
// steps 1–2): every space under scope account, else the spaces granted
// without the contacts space.
type ProposalReach struct {
	All    bool     // scope account: "all"
	Spaces []string // the spaces granted, the contacts space left out
	// AppName is the connection's name, which the automation's app.name
	// takes before the request's (step 4).
	AppName string
}

// ProposalReach finds the connection the home keeps for origin, other than
// one by code or a carrier's (06 §2.11 step 1; none: home/no-connection),
// and works out what the app may reach (step 2; nothing: home/no-reach).
func (h *Home) ProposalReach(ctx context.Context, origin string) (ProposalReach, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	conns, err := h.store.Connections(ctx)
	if err != nil {
		return ProposalReach{}, fmt.Errorf("minca/connect: reading the home's connections: %w", err)
	}
	id := (&Connection{Kind: KindApp, Origin: origin}).ID()
	for _, c := range conns {
		if c.ID() != id {
			continue
		}
		if c.Scope == ScopeAccount {
			return ProposalReach{All: true, AppName: c.Name}, nil
		}
		spaces := slices.DeleteFunc(slices.Clone(c.Spaces), func(s string) bool { return s == c.ContactsSpace })
		if len(spaces) == 0 {
			return ProposalReach{}, refuse(CodeHomeNoReach, "", "the app at "+origin+" may reach no space to propose automations about (06 §2.11 step 2)")
		}
		return ProposalReach{Spaces: spaces, AppName: c.Name}, nil
	}
	return ProposalReach{}, refuse(CodeHomeNoConn, "", "no app is connected at "+origin+"; only an app the home keeps a connection for may propose (06 §2.11 step 1)")
}

// Check checks every proposal the person kept before any is written (06
// §2.11 step 3): the whole proposal is refused (home/outside-reach) when one
// names in spaces a space outside the reach.
func (r ProposalReach) Check(kept []Proposal) error {
	if r.All {
		return nil
	}
	for i, p := range kept {
		for _, s := range p.Spaces {
			if !slices.Contains(r.Spaces, s) {
				return refuse(CodeHomeOutside, fmt.Sprintf("automations[%d].spaces", i), "the proposal "+fmt.Sprintf("%q", p.Name)+" names "+s+", a space the app may not reach (06 §2.11 step 3)")
			}
		}
	}
	return nil
}

// SpacesOf is the spaces an automation kept from p covers (06 §2.11 step
// 4): p's own, else the reach; nil with all for "all".
func (r ProposalReach) SpacesOf(p Proposal) (spaces []string, all bool) {
	if p.Spaces != nil {
		return slices.Clone(p.Spaces), false
	}
	return slices.Clone(r.Spaces), r.All
}
