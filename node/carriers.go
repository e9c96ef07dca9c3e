package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/minca-go/minca/carry"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
)

// Carriers (06 §4) in our profile, the account's side: docs/carriers.md,
// with the records package carry holds. A carrier is named in the account
// registry by a sys.carrier record keyed by its carry space; the carry
// space, which every device derives the same way from the account key, the
// carrier's did and a generation, holds the passes, wakes and links the
// carrier needs and nothing else.

// CodeNoAccountKey: carriers need the account key (06 §4.2: "Using a
// carrier needs the account key").
const CodeNoAccountKey = "carry/account-key"

// Carriers lists the account's carriers, live and removed: every standing
// sys.carrier record of its registry that names a carry space.
func (n *Node) Carriers(ctx context.Context) ([]carry.Carrier, error) {
	reg := n.Registry()
	if reg == "" {
		return nil, nil
	}
	cur, err := n.currentIn(ctx, reg, carry.CarrierCollection)
	if err != nil {
		return nil, err
	}
	out := make([]carry.Carrier, 0, len(cur))
	for _, v := range cur {
		body, ok := n.registryBody(v)
		if !ok {
			continue
		}
		if c, ok := carry.ReadCarrier(v.Key, body); ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// carrySpaces is the set of the account's carry spaces, live or removed.
func (n *Node) carrySpaces(ctx context.Context) (map[string]bool, error) {
	cs, err := n.Carriers(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(cs))
	for _, c := range cs {
		m[c.Space] = true
	}
	return m, nil
}

// IsCarrySpace reports whether id is one of the account's carry spaces (06
// §4.2: "A space is a carry space when a sys.carrier record of the
// account's, live or removed, is keyed by its id").
func (n *Node) IsCarrySpace(ctx context.Context, id string) (bool, error) {
	m, err := n.carrySpaces(ctx)
	return m[id], err
}

// CarrierOf is the carrier whose carry space spaceID is, live or removed
// (so a removed one still hears carry:closed); ok is false when it is no
// carry space of the account's. A sync host lets that carrier, by its key,
// read the space (06 §4.2).
func (n *Node) CarrierOf(ctx context.Context, spaceID string) (did string, ok bool, err error) {
	cs, err := n.Carriers(ctx)
	if err != nil {
		return "", false, err
	}
	for _, c := range cs {
		if c.Space == spaceID {
			return c.DID, true, nil
		}
	}
	return "", false, nil
}

// CarrySpaceIDs lists the carry spaces the node keeps open, live and
// removed, for sync to serve: a removed carrier's carry space stays open
// until the node closes, so the carrier hears carry:closed (06 §4.2).
func (n *Node) CarrySpaceIDs(ctx context.Context) ([]string, error) {
	cs, err := n.Carriers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		if _, ok, err := judge.GenesisOf(ctx, n.st, c.Space); err != nil {
			return nil, err
		} else if ok {
			out = append(out, c.Space)
		}
	}
	return out, nil
}

// CarryAdded is what adding a carrier returns (06 §4.2 step 3): its carry
// space and a view-only invite to it, which the carrier joins with.
type CarryAdded struct {
	Space  string
	Invite string
	Gen    int64
	// New is false when the account already used the carrier: its carry
	// space is returned as it is.
	New bool
}

// AddCarrier adds a carrier by its did (06 §4.2): a carrier the account
// already uses gets its carry space back as it is; a new one, or one
// added again after it was removed, gets the carry space of the next
// generation, a sys.carrier record, and the carry space filled with its
// passes, wakes and links; then the account's carriers are named keepers
// of the spaces it manages. Nothing is stored before the sys.carrier
// record is, so an add that fails before leaves nothing behind.
func (n *Node) AddCarrier(ctx context.Context, did, name string) (*CarryAdded, error) {
	if n.account == nil {
		return nil, writeErr(CodeNoAccountKey, "", "using a carrier needs the account key (06 §4.2)")
	}
	if _, err := identity.ParseDID(did); err != nil {
		return nil, writeErr(CodeBadInput, "did", "a carrier is named by a P-256 did:key: "+err.Error())
	}
	if !carry.ValidName(name) {
		return nil, writeErr(CodeBadInput, "name", fmt.Sprintf("a carrier's name is at most %d characters", carry.MaxName))
	}
	n.carryMu.Lock()
	defer n.carryMu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cs, err := n.Carriers(ctx)
	if err != nil {
		return nil, err
	}
	var gen int64
	seen := false
	for _, c := range cs {
		if c.DID != did {
			continue
		}
		if c.Live() {
			return n.carryAdded(ctx, c, false)
		}
		if !seen || c.Gen+1 > gen {
			gen = c.Gen + 1
		}
		seen = true
	}
	g, k, err := carry.DeriveSpace(n.account, did, gen)
	if err != nil {
		return nil, err
	}
	c := carry.Carrier{DID: did, Name: name, Since: record.FormatTime(n.now()), Gen: gen, Space: g.ID}
	if _, err := n.w.do(ctx, &writeReq{space: n.registry, collection: carry.CarrierCollection, key: c.Key(), body: c.Value(), sys: true, sealWith: n.registryKey}); err != nil {
		return nil, fmt.Errorf("minca/node: adding carrier %s: %w", did, err)
	}
	if err := judge.AddGenesis(ctx, n.st, g); err != nil {
		return nil, err
	}
	if err := n.fill(ctx, c, k); err != nil {
		return nil, fmt.Errorf("minca/node: filling the carry space of %s: %w", did, err)
	}
	if err := n.nameKeepers(ctx); err != nil {
		return nil, err
	}
	return n.carryAdded(ctx, c, true)
}

// PutRegistry writes a record of the account's own machinery in its
// registry that a carrier's carry space copies (06 §4.2, §4.4): an
// automation of the account's own (sys.automation) or a link
// (sys.link). It needs the account key; a nil body deletes the record.
func (n *Node) PutRegistry(ctx context.Context, coll, key string, body any) error {
	if n.account == nil {
		return writeErr(CodeNoAccountKey, "", "the account registry is written with the account key (06 §1.3)")
	}
	if coll != carry.AutomationCollection && coll != carry.LinkCollection {
		return writeErr(CodeBadInput, "collection", "the registry records written here are sys.automation and sys.link")
	}
	if !record.ValidKey(key) {
		return writeErr(CodeBadKey, "key", "a key is 1–128 characters of [a-z0-9:._-] (02 §4.1)")
	}
	if body == nil {
		return n.deleteSys(ctx, n.registry, key)
	}
	b, err := asValue(body)
	if err != nil {
		return writeErr(CodeBadInput, "body", err.Error())
	}
	_, err = n.w.do(ctx, &writeReq{space: n.registry, collection: coll, key: key, body: b, sys: true, sealWith: n.registryKey})
	return err
}

// carryAdded is c's carry space and a view-only invite to it.
func (n *Node) carryAdded(ctx context.Context, c carry.Carrier, fresh bool) (*CarryAdded, error) {
	if c.Invite != "" {
		return &CarryAdded{Space: c.Space, Invite: c.Invite, Gen: c.Gen, New: fresh}, nil
	}
	g, k, err := carry.DeriveSpace(n.account, c.DID, c.Gen)
	if err != nil {
		return nil, err
	}
	if g.ID != c.Space {
		return nil, fmt.Errorf("minca/node: the sys.carrier record of %s names %s, not the carry space its gen derives", c.DID, c.Space)
	}
	if err := judge.AddGenesis(ctx, n.st, g); err != nil {
		return nil, err
	}
	inv, err := carry.ViewInvite(g, k)
	if err != nil {
		return nil, err
	}
	return &CarryAdded{Space: c.Space, Invite: inv, Gen: c.Gen, New: fresh}, nil
}

// RemoveCarrier removes a carrier by its did (06 §4.2): in each of its
// live carry spaces every pass is deleted, carry:closed is written, then
// its sys.carrier record again with removed, and the carrier is no longer
// named a keeper. It waits for a refill under way, so no pass is written
// back. The carry space stays open while the node runs. Removing a
// carrier the account does not use is CodeNotFound.
func (n *Node) RemoveCarrier(ctx context.Context, did string) error {
	if n.account == nil {
		return writeErr(CodeNoAccountKey, "", "using a carrier needs the account key (06 §4.2)")
	}
	n.carryMu.Lock()
	defer n.carryMu.Unlock()
	cs, err := n.Carriers(ctx)
	if err != nil {
		return err
	}
	found := false
	for _, c := range cs {
		if c.DID != did || !c.Live() {
			continue
		}
		found = true
		if err := n.closeCarrySpace(ctx, c); err != nil {
			return fmt.Errorf("minca/node: removing carrier %s: %w", did, err)
		}
		c.Removed = record.FormatTime(n.now())
		if _, err := n.w.do(ctx, &writeReq{space: n.registry, collection: carry.CarrierCollection, key: c.Key(), body: c.Value(), sys: true, sealWith: n.registryKey}); err != nil {
			return fmt.Errorf("minca/node: removing carrier %s: %w", did, err)
		}
	}
	if !found {
		return writeErr(CodeNotFound, "did", "the account uses no carrier "+did)
	}
	return n.nameKeepers(ctx)
}

// closeCarrySpace deletes every pass in c's carry space and writes
// carry:closed.
func (n *Node) closeCarrySpace(ctx context.Context, c carry.Carrier) error {
	g, k, err := carry.DeriveSpace(n.account, c.DID, c.Gen)
	if err != nil {
		return err
	}
	if g.ID != c.Space {
		return nil // a legacy carry space: not ours to write
	}
	if err := judge.AddGenesis(ctx, n.st, g); err != nil {
		return err
	}
	passes, err := n.currentIn(ctx, c.Space, carry.PassCollection)
	if err != nil {
		return err
	}
	for key := range passes {
		if key == carry.ClosedKey {
			continue
		}
		if err := n.deleteSys(ctx, c.Space, key); err != nil {
			return err
		}
	}
	return n.writeSealed(ctx, c.Space, carry.PassCollection, carry.ClosedKey, carry.Closed(), k)
}

// currentIn lists the current version of each record of coll in a space
// that is not a delete, by key.
func (n *Node) currentIn(ctx context.Context, spaceID, coll string) (map[string]*record.Version, error) {
	return carry.Current(ctx, n.st, spaceID, coll)
}

// writeSealed writes a sys.* record of a carry space or the registry, its
// body sealed under the space's key.
func (n *Node) writeSealed(ctx context.Context, spaceID, coll, key string, body any, k *seal.Key) error {
	_, err := n.w.do(ctx, &writeReq{space: spaceID, collection: coll, key: key, body: body, sys: true, sealWith: k})
	return err
}

// deleteSys deletes a sys.* record; one already gone is no error.
func (n *Node) deleteSys(ctx context.Context, spaceID, key string) error {
	_, err := n.w.do(ctx, &writeReq{space: spaceID, key: key, del: true, sys: true})
	var we *WriteError
	if errors.As(err, &we) && we.Code == CodeNotFound {
		return nil
	}
	return err
}
