package connect

import (
	"context"
	"slices"
	"sync"
)

// Kind is which of the home's three kinds of connection one is (06 §2.10):
// an app's, kept by its origin; a program's connected by code, kept by its
// key; a carrier's, kept by its key, one a origin.
type Kind uint8

const (
	KindApp     Kind = iota + 1 // an app, over the popup exchange (§2.3)
	KindCode                    // a program connected by code (§3)
	KindCarrier                 // a carrier (§4.3)
)

func (k Kind) String() string {
	switch k {
	case KindApp:
		return "app"
	case KindCode:
		return "code"
	case KindCarrier:
		return "carrier"
	}
	return "kind?"
}

// KindOf is the kind of connection a request makes.
func KindOf(r *ConnectRequest) Kind {
	switch {
	case r.Access == AccessCarry:
		return KindCarrier
	case r.Via == ViaCode:
		return KindCode
	}
	return KindApp
}

// Connection is one connection the home remembers (06 §2.10): the app's
// origin, audience, access, scope and the spaces granted, and the keys it
// replaced that could write, each with the reach it was granted, so
// disconnecting revokes them too.
type Connection struct {
	Kind     Kind
	Origin   string // the app's or carrier's origin; "" for a program connected by code
	Audience string // the key the note (or, for a carrier, the carry space) was made out to
	Name     string // what it called itself, as a name only
	Access   string // AccessRead, AccessWrite or AccessCarry
	Scope    string // ScopeSpaces or ScopeAccount; "" for a carrier
	// Spaces are the spaces granted (scope spaces), the contacts space
	// among them when ContactsSpace names it.
	Spaces        []string
	ContactsSpace string
	RecordsOnly   bool
	ExpiresAt     int64 // Unix seconds; 0 for a carrier, whose connection has no expiry
	// Replaced are keys this connection replaced, or earlier grants to
	// its own key, that could write: each with the reach it was granted
	// (§2.10: "the home keeps each old key that could write with the
	// connection, with the scope and spaces it was granted").
	Replaced []Reach
}

// ID is the connection's identity in the home's store: an app's is its
// origin, a program's by code and a carrier's their key (06 §2.10).
func (c *Connection) ID() string {
	switch c.Kind {
	case KindApp:
		return "app:" + c.Origin
	case KindCode:
		return "code:" + c.Audience
	}
	return "carrier:" + c.Audience
}

// reach is what disconnecting would revoke of the connection's own key.
func (c *Connection) reach() (Reach, bool) {
	if c.Access != AccessWrite {
		return Reach{}, false
	}
	return Reach{Key: c.Audience, Account: c.Scope == ScopeAccount, Spaces: slices.Clone(c.Spaces)}, true
}

// holds reports whether the connection holds key: as its audience or as a
// key it replaced.
func (c *Connection) holds(key string) bool {
	if c.Audience == key {
		return true
	}
	for _, r := range c.Replaced {
		if r.Key == key {
			return true
		}
	}
	return false
}

func (c *Connection) clone() Connection {
	d := *c
	d.Spaces = slices.Clone(c.Spaces)
	d.Replaced = make([]Reach, len(c.Replaced))
	for i, r := range c.Replaced {
		d.Replaced[i] = Reach{Key: r.Key, Account: r.Account, Spaces: slices.Clone(r.Spaces)}
	}
	return d
}

// Store keeps the home's connections (06 §2.10). The node persists it; a
// [MemStore] keeps it in memory. A Store need not be safe for concurrent
// use: a [Home] calls it under its own lock.
type Store interface {
	// Connections returns every connection kept, in no particular order.
	Connections(ctx context.Context) ([]Connection, error)
	// Apply removes the connections with the ids in remove and puts those
	// in put (replacing one with the same id), all at once or not at all,
	// and durably before it returns.
	Apply(ctx context.Context, put []Connection, remove []string) error
}

// MemStore is a [Store] in memory, for tests and a home that keeps
// nothing across runs. The zero value is ready; it is safe for concurrent
// use.
type MemStore struct {
	mu sync.Mutex
	m  map[string]Connection
}

var _ Store = (*MemStore)(nil)

// Connections returns copies of the connections kept.
func (s *MemStore) Connections(ctx context.Context) ([]Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Connection, 0, len(s.m))
	for _, c := range s.m {
		out = append(out, c.clone())
	}
	return out, nil
}

// Apply removes, then puts, copies of the connections given.
func (s *MemStore) Apply(ctx context.Context, put []Connection, remove []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]Connection{}
	}
	for _, id := range remove {
		delete(s.m, id)
	}
	for i := range put {
		s.m[put[i].ID()] = put[i].clone()
	}
	return nil
}
