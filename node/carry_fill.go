package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/carry"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// RefillCarriers keeps each live carrier's carry space in step with the
// account (06 §1.3, §4.2): one pass per space the account uses and this
// node holds with its key, one wake per automation of the account's own,
// each sys.link of the registry; what no longer belongs is deleted. Then
// the live carriers are named keepers. A carrier the registry shows
// removed gets nothing; a removal waits for a refill under way.
func (n *Node) RefillCarriers(ctx context.Context) error {
	if n.account == nil {
		return nil
	}
	n.carryMu.Lock()
	defer n.carryMu.Unlock()
	cs, err := n.Carriers(ctx)
	if err != nil || len(cs) == 0 {
		return err // no carrier: nothing to keep in step, no keeper to name
	}
	// What follows reads the geneses and keys of the spaces the registry
	// lists. The event pump keeps them as sys.joined records arrive, but
	// a refill may run before it has: a space whose genesis is not held
	// yet would get no keeper here, and nothing would refill once it is.
	if err := n.followRegistry(ctx); err != nil {
		return err
	}
	for _, c := range cs {
		if !c.Live() || c.Invite != "" {
			continue
		}
		g, k, err := carry.DeriveSpace(n.account, c.DID, c.Gen)
		if err != nil || g.ID != c.Space {
			continue // not a carry space this node derives
		}
		if err := judge.AddGenesis(ctx, n.st, g); err != nil {
			return err
		}
		if err := n.fill(ctx, c, k); err != nil {
			return fmt.Errorf("minca/node: refilling the carry space of %s: %w", c.DID, err)
		}
	}
	return n.nameKeepers(ctx)
}

// fill brings c's carry space in step with the account.
func (n *Node) fill(ctx context.Context, c carry.Carrier, k *seal.Key) error {
	passes, left, err := n.passes(ctx)
	if err != nil {
		return err
	}
	if err := n.syncSealed(ctx, c.Space, carry.PassCollection, passes, k, func(key string) bool {
		return key == carry.ClosedKey || !left[key]
	}); err != nil {
		return err
	}
	wakes, err := n.wakes(ctx)
	if err != nil {
		return err
	}
	if err := n.syncSealed(ctx, c.Space, carry.WakeCollection, wakes, k, nil); err != nil {
		return err
	}
	links, err := n.currentIn(ctx, n.registry, carry.LinkCollection)
	if err != nil {
		return err
	}
	want := make(map[string]any, len(links))
	for key, v := range links {
		if body, ok := n.registryBody(v); ok {
			want[key] = body
		}
	}
	return n.syncSealed(ctx, c.Space, carry.LinkCollection, want, k, nil)
}

// passes are the passes every carry space holds now, by key: the account
// registry's (from its one key), and one for each space the registry lists
// whose genesis is held — a private one only with the key the node holds
// for it now. left are the keys of the passes of the spaces the registry
// shows the account left: those alone are deleted. A pass of a space
// listed that this node cannot write one for (no genesis, or no key yet,
// as on a device new to the account), or of a space its registry does
// not list yet (the registry still arriving), is the account's still, and
// stays as another device wrote it.
func (n *Node) passes(ctx context.Context) (out map[string]any, left map[string]bool, err error) {
	out, left = map[string]any{}, map[string]bool{}
	out[carry.PassKey(n.registry)] = carry.NewPass(n.registryG, n.registryKey).Value()
	joined, gone, err := n.joinedAndLeft(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, id := range gone {
		left[carry.PassKey(id)] = true
	}
	for _, j := range joined {
		g, ok, err := judge.GenesisOf(ctx, n.st, j.id)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		var k *seal.Key
		if g.Private() {
			if k, err = n.passKey(ctx, g); err != nil {
				return nil, nil, err
			}
			if k == nil {
				continue // held without its key: no pass from here until it arrives
			}
		}
		out[carry.PassKey(g.ID)] = carry.NewPass(g, k).Value()
	}
	return out, left, nil
}

// passKey is the key a private space's pass is written from: of the
// space's current keys the node holds, one not stale if it can (the one it
// would seal under), else a stale one — a key a removed member may hold
// is still the key the space is read under until it changes, and the
// carrier still carries the space; nil when it holds none.
func (n *Node) passKey(ctx context.Context, g *space.Genesis) (*seal.Key, error) {
	var rings judge.KeyRings = n.keys
	if n.o.PassKeys != nil {
		rings = n.o.PassKeys
	}
	ring := rings.Keyring(g.ID)
	if ring == nil {
		return nil, nil
	}
	heads, err := n.keyHeads(ctx, g.ID)
	if err != nil {
		return nil, err
	}
	k, err := ring.Current(heads)
	if !errors.Is(err, seal.ErrNoCurrentKey) {
		return k, err
	}
	fresh := make([]seal.Head, len(heads))
	for i, h := range heads {
		fresh[i] = seal.Head{KeyID: h.KeyID}
	}
	k, err = ring.Current(fresh)
	if errors.Is(err, seal.ErrNoCurrentKey) {
		return nil, nil
	}
	return k, err
}

// wakes are the wakes every carry space holds now, by key: one per
// automation of the account's own that this profile reads.
func (n *Node) wakes(ctx context.Context) (map[string]any, error) {
	autos, err := n.currentIn(ctx, n.registry, carry.AutomationCollection)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for key, v := range autos {
		body, _ := n.registryBody(v)
		w, err := carry.ReadAutomation(key, body)
		wk := carry.WakeKey(key)
		if err != nil || wk == "" {
			n.o.Logger.Warn("an automation no carrier can match", "key", key, "err", err)
			continue
		}
		out[wk] = w.Value()
	}
	return out, nil
}

// syncSealed makes coll in a carry space hold exactly want, by key, each
// body sealed under k: a record whose opened body differs is written
// again, one not wanted is deleted (but those keep, when not nil, says
// stay).
func (n *Node) syncSealed(ctx context.Context, spaceID, coll string, want map[string]any, k *seal.Key, keep func(key string) bool) error {
	have, err := n.currentIn(ctx, spaceID, coll)
	if err != nil {
		return err
	}
	for _, key := range slices.Sorted(maps.Keys(want)) {
		if v, ok := have[key]; ok && sameSealed(k, spaceID, coll, key, v.Body, want[key]) {
			continue
		}
		if err := n.writeSealed(ctx, spaceID, coll, key, want[key], k); err != nil {
			return err
		}
	}
	for _, key := range slices.Sorted(maps.Keys(have)) {
		if _, ok := want[key]; ok || keep != nil && keep(key) {
			continue
		}
		if err := n.deleteSys(ctx, spaceID, key); err != nil {
			return err
		}
	}
	return nil
}

// sameSealed reports whether a sealed body opens under k to body.
func sameSealed(k *seal.Key, spaceID, coll, key string, sealed, body any) bool {
	o, err := seal.OpenBody(k, spaceID, coll, key, sealed)
	if err != nil {
		return false
	}
	a, err1 := canonical.Marshal(o.Body)
	b, err2 := canonical.Marshal(body)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// nameKeepers names the account's live carriers as keepers of each space
// the account uses where it is granted /space/keepers, and stops naming
// those it removed; other keepers stay (06 §4.2). At most 16 keepers: the
// others first, then live carriers by did. A space where the account may
// not name keepers is left as it is.
func (n *Node) nameKeepers(ctx context.Context) error {
	cs, err := n.Carriers(ctx)
	if err != nil {
		return err
	}
	ours := map[string]bool{}
	live := map[string]string{}
	for _, c := range cs {
		ours[c.DID] = true
		if c.Live() {
			live[c.DID] = c.Name
		}
	}
	ids := []string{n.registry}
	joined, err := n.joined(ctx)
	if err != nil {
		return err
	}
	for _, j := range joined {
		ids = append(ids, j.id)
	}
	for _, id := range ids {
		var now []space.Keeper
		ok, err := n.judge.WithHistory(ctx, id, func(h *space.History) error {
			now = h.Now().Keepers()
			return nil
		})
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		var next []space.Keeper
		for _, k := range now {
			if !ours[k.DID] {
				next = append(next, k)
			}
		}
		for _, did := range slices.Sorted(maps.Keys(live)) {
			if len(next) < space.MaxKeepers {
				next = append(next, space.Keeper{DID: did, Name: live[did]})
			}
		}
		if sameKeepers(now, next) {
			continue
		}
		_, err = n.WriteKeepers(ctx, id, next)
		var we *WriteError
		if errors.As(err, &we) {
			n.o.Logger.Debug("not naming keepers", "space", id, "err", err)
			continue // not granted /space/keepers there
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// keepersKey is the key of a space's sys.keepers record.
const keepersKey = "keepers"

// WriteKeepers names a space's keepers (06 §4.2; docs/spaces.md
// sys.keepers): at key "keepers", body {keepers: [{did, name}…]}.
func (n *Node) WriteKeepers(ctx context.Context, spaceID string, keepers []space.Keeper) (*record.Version, error) {
	l := make([]any, len(keepers))
	for i, k := range keepers {
		l[i] = canonical.NewObject("did", k.DID, "name", k.Name)
	}
	return n.writeAccess(ctx, spaceID, space.KindKeepers, keepersKey, canonical.NewObject("keepers", l))
}

func sameKeepers(a, b []space.Keeper) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[space.Keeper]int{}
	for _, k := range a {
		m[k]++
	}
	for _, k := range b {
		if m[k] == 0 {
			return false
		}
		m[k]--
	}
	return true
}

// carryDelay is how long the node waits after a change before it refills
// the carry spaces, so a burst of changes makes one refill.
const carryDelay = 100 * time.Millisecond

// refillSoon asks the carry loop for a refill: the node took a private
// space's key, from a box or a key change sync brought, or met by a
// reader, and may now write that space's pass (passes).
func (n *Node) refillSoon() {
	select {
	case n.refill <- struct{}{}:
	default:
	}
}

// carryLoop keeps the carry spaces in step while the node runs (06 §1.3):
// a refill when it opens, after each change to the account registry or
// to a space's key, and after the node takes a key (refillSoon); the
// node's own writes in carry spaces and keepers start none.
func (n *Node) carryLoop() {
	defer n.wg.Done()
	sub := n.st.Subscribe("", 256)
	defer sub.Close()
	t := time.NewTimer(0)
	defer t.Stop()
	var dropped int64
	for {
		select {
		case <-n.ctx.Done():
			return
		case e := <-sub.Events():
			if e.Space == n.registry && e.Key != keepersKey || strings.HasPrefix(e.Key, "key:") {
				t.Reset(carryDelay)
			}
		case <-n.refill:
			t.Reset(carryDelay)
		case <-t.C:
			if err := n.RefillCarriers(n.ctx); err != nil && n.ctx.Err() == nil {
				n.o.Logger.Warn("refilling the carry spaces", "err", err)
			}
			if d := sub.Dropped(); d != dropped {
				dropped = d
				t.Reset(carryDelay) // events were lost: look again
			}
		}
	}
}
