package node

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// Carriers (06 §4) in our profile, the account's side: docs/carriers.md.
// A carrier is named in the account registry by a sys.carrier record keyed
// by its carry space; the carry space, which every device derives the same
// way from the account key, the carrier's did and a generation, holds the
// passes, wakes and links the carrier needs and nothing else.
const (
	CarrierCollection    = "sys.carrier"    // the account's carriers, in its registry (06 §4.2)
	PassCollection       = "sys.pass"       // passes, and carry:closed, in a carry space
	WakeCollection       = "sys.wake"       // wakes, in a carry space (06 §4.4)
	LinkCollection       = "sys.link"       // the registry's links, copied into a carry space
	AutomationCollection = "sys.automation" // the account's own automations, in its registry (06 §2.11)

	carrierPrefix = "carrier:"
	passPrefix    = "pass:"
	wakePrefix    = "wake:"
	// ClosedKey is the sys.pass record that tells a carrier the account
	// removed it: body {"v": 1, "closed": true} (06 §4.2).
	ClosedKey = "carry:closed"

	carryName     = "carry"
	carryNonce    = "minca/carry-space/v1"
	carryKeyInfo  = "minca/carry-key/v1|"
	maxCarryName  = 80
	maxCarrierGen = 1<<53 - 1
)

// CodeNoAccountKey: carriers need the account key (06 §4.2: "Using a
// carrier needs the account key").
const CodeNoAccountKey = "carry/account-key"

// CarrySpace derives the carry space of the carrier did at generation gen
// for the account (06 §4.2 step 1): its first key K₀ is HKDF-SHA-256 of the
// account key's scalar with info "minca/carry-key/v1|" ‖ did ‖ "|" ‖ gen
// (decimal), and its genesis is private and the account's own, founded by
// the account alone, named "carry", created at the registry's time, with
// nonce "minca/carry-space/v1" and K₀'s keyId. Every device holding the
// account key derives the same space; nobody else can.
func CarrySpace(account *identity.PrivateKey, did string, gen int64) (*space.Genesis, *seal.Key, error) {
	if gen < 0 || gen > maxCarrierGen {
		return nil, nil, fmt.Errorf("minca/node: a carrier's gen is a non-negative integer, not %d", gen)
	}
	secret := account.DeriveSecret(carryKeyInfo + did + "|" + strconv.FormatInt(gen, 10))
	k, err := seal.KeyFromBytes(secret[:])
	if err != nil {
		return nil, nil, err
	}
	g, err := space.NewGenesis(space.GenesisOptions{Name: carryName, Private: true, Founders: []string{account.DID()},
		CreatedAt: registryCreated, Nonce: carryNonce, Account: true, EncryptionKeyID: k.ID()})
	if err != nil {
		return nil, nil, err
	}
	return g, k, nil
}

// CarrierRecord is a sys.carrier record of the account's registry (06
// §4.2): key "carrier:" ‖ the carry space's id, body {did, name, since,
// gen?, removed?}; a record from before carry spaces were derived also
// names its space and a view-only invite.
type CarrierRecord struct {
	DID   string
	Name  string
	Since string
	Gen   int64
	// Space is the carry space: the record's key alone decides it.
	Space string
	// Removed is when the carrier was removed; "" while it is live.
	Removed string
	// Invite is a legacy record's view-only invite; "" otherwise.
	Invite string
}

// Live reports whether the account still uses the carrier.
func (c CarrierRecord) Live() bool { return c.Removed == "" }

func (c CarrierRecord) body() *canonical.Object {
	o := canonical.NewObject("did", c.DID, "name", c.Name, "since", c.Since)
	if c.Gen != 0 {
		o.Set("gen", float64(c.Gen))
	}
	if c.Removed != "" {
		o.Set("removed", c.Removed)
	}
	return o
}

// readCarrier reads a sys.carrier version, its body opened; ok is false
// for one that names
// no carry space: a key not of the form, a did that is not a P-256
// did:key, or a gen that is not a non-negative integer (06 §4.2: "such a
// record is ignored").
func readCarrier(v *record.Version) (CarrierRecord, bool) {
	id, ok := strings.CutPrefix(v.Key, carrierPrefix)
	if !ok || id == "" {
		return CarrierRecord{}, false
	}
	o, ok := v.Body.(*canonical.Object)
	if !ok {
		return CarrierRecord{}, false
	}
	str := func(name string) (string, bool) {
		x, ok := o.Get(name)
		s, isStr := x.(string)
		return s, ok && isStr
	}
	c := CarrierRecord{Space: id}
	if c.DID, ok = str("did"); !ok {
		return CarrierRecord{}, false
	}
	if _, err := identity.ParseDID(c.DID); err != nil {
		return CarrierRecord{}, false
	}
	c.Name, _ = str("name")
	c.Since, _ = str("since")
	c.Removed, _ = str("removed")
	c.Invite, _ = str("invite")
	if x, has := o.Get("gen"); has {
		f, isNum := x.(float64)
		if !isNum || f < 0 || f > maxCarrierGen || f != math.Trunc(f) {
			return CarrierRecord{}, false
		}
		c.Gen = int64(f)
	}
	return c, true
}

// Carriers lists the account's carriers, live and removed: every standing
// sys.carrier record of its registry that names a carry space.
func (n *Node) Carriers(ctx context.Context) ([]CarrierRecord, error) {
	reg := n.Registry()
	if reg == "" {
		return nil, nil
	}
	cur, err := n.currentIn(ctx, reg, CarrierCollection)
	if err != nil {
		return nil, err
	}
	out := make([]CarrierRecord, 0, len(cur))
	for _, v := range cur {
		body, ok := n.registryBody(v)
		if !ok {
			continue
		}
		if c, ok := readCarrier(&record.Version{Key: v.Key, Body: body}); ok {
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
	if utf16Len(name) > maxCarryName {
		return nil, writeErr(CodeBadInput, "name", fmt.Sprintf("a carrier's name is at most %d characters", maxCarryName))
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
	g, k, err := CarrySpace(n.account, did, gen)
	if err != nil {
		return nil, err
	}
	c := CarrierRecord{DID: did, Name: name, Since: record.FormatTime(n.now()), Gen: gen, Space: g.ID}
	if _, err := n.w.do(ctx, &writeReq{space: n.registry, collection: CarrierCollection, key: carrierPrefix + g.ID, body: c.body(), sys: true, sealWith: n.registryKey}); err != nil {
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
	if coll != AutomationCollection && coll != LinkCollection {
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
func (n *Node) carryAdded(ctx context.Context, c CarrierRecord, fresh bool) (*CarryAdded, error) {
	if c.Invite != "" {
		return &CarryAdded{Space: c.Space, Invite: c.Invite, Gen: c.Gen, New: fresh}, nil
	}
	g, k, err := CarrySpace(n.account, c.DID, c.Gen)
	if err != nil {
		return nil, err
	}
	if g.ID != c.Space {
		return nil, fmt.Errorf("minca/node: the sys.carrier record of %s names %s, not the carry space its gen derives", c.DID, c.Space)
	}
	if err := judge.AddGenesis(ctx, n.st, g); err != nil {
		return nil, err
	}
	inv, err := ViewInvite(g, k)
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
		if _, err := n.w.do(ctx, &writeReq{space: n.registry, collection: CarrierCollection, key: carrierPrefix + c.Space, body: c.body(), sys: true, sealWith: n.registryKey}); err != nil {
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
func (n *Node) closeCarrySpace(ctx context.Context, c CarrierRecord) error {
	g, k, err := CarrySpace(n.account, c.DID, c.Gen)
	if err != nil {
		return err
	}
	if g.ID != c.Space {
		return nil // a legacy carry space: not ours to write
	}
	if err := judge.AddGenesis(ctx, n.st, g); err != nil {
		return err
	}
	passes, err := n.currentIn(ctx, c.Space, PassCollection)
	if err != nil {
		return err
	}
	for key := range passes {
		if key == ClosedKey {
			continue
		}
		if err := n.deleteSys(ctx, c.Space, key); err != nil {
			return err
		}
	}
	return n.writeSealed(ctx, c.Space, PassCollection, ClosedKey, canonical.NewObject("v", float64(1), "closed", true), k)
}

// currentIn lists the current version of each record of coll in a space
// that is not a delete, by key.
func (n *Node) currentIn(ctx context.Context, spaceID, coll string) (map[string]*record.Version, error) {
	return CurrentRecords(ctx, n.st, spaceID, coll)
}

// CurrentRecords lists the readable current version (engine.Store.Current)
// of each record of coll in a space that is not a delete, by key: how a
// node and a carrier read a registry's or a carry space's records.
func CurrentRecords(ctx context.Context, st *engine.Store, spaceID, coll string) (map[string]*record.Version, error) {
	out := map[string]*record.Version{}
	seen := map[string]bool{}
	for v, err := range st.Export(ctx, spaceID) {
		if err != nil {
			return nil, err
		}
		if v.Collection != coll || seen[v.Key] {
			continue
		}
		seen[v.Key] = true
		cur, err := st.Current(ctx, spaceID, v.Key)
		if errors.Is(err, engine.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !cur.Deleted && cur.Collection == coll {
			out[v.Key] = cur
		}
	}
	return out, nil
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

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
