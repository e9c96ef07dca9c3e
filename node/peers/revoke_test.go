package peers_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

// notHeldAnswer is what b answers a NEG-OPEN of a space it does not hold:
// what it must answer, byte for byte, for a space the peer may not read.
func notHeldAnswer(t *testing.T, b *tnode) (string, string) {
	t.Helper()
	h := newHostile(t, b, nil)
	h.send(negOpen(t, 1, "bnotheldnotheldnotheldnotheldnotheldnotheldnotheldnot", nil))
	return h.negErr(1)
}

// A key revoked while its session is live can no longer read (docs/sync.md
// §7.2). The who exchange refuses a revoked key, but a connection proven
// before the revoke relies on the read rule: once the space revokes the
// peer's key, the session's next answer ends it with sync/not-held, and a
// new NEG-OPEN of the space gets the answer a space not held gets; another
// key on the same node reads on.
func TestRevokedMidSessionReadsNothingMore(t *testing.T) {
	ctx := context.Background()
	b := newNode(t, nil)
	peers.SetRecheck(b.peers, 0) // the read rule is asked before every answer
	g := shared(t, b)
	held, err := b.Put(ctx, g.ID, "app.notes", map[string]any{"text": "held"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := canonical.ParseID(held.ID)
	if err != nil {
		t.Fatal(err)
	}
	self, other := transporttest.Session(t), transporttest.Session(t)
	h, o := newHostile(t, b, self), newHostile(t, b, other)
	for _, x := range []*hostile{h, o} {
		x.send(negOpen(t, 1, g.ID, nil))
		x.until(tNegMsg, 1)
		x.send(wire(tWant, 1, []byte{0}, d[:]))
		x.until(tVersions, 1)
	}

	if _, err := b.Revoke(ctx, g.ID, self.DID(), self.Note().Iss, nil); err != nil {
		t.Fatal(err)
	}
	h.send(wire(tWant, 1, []byte{0}, d[:]))
	if code, _ := h.negErr(1); code != peers.CodeNotHeld {
		t.Fatalf("the live session of a key revoked since: %s, want %s", code, peers.CodeNotHeld)
	}
	wantCode, wantMsg := notHeldAnswer(t, b)
	h.send(negOpen(t, 3, g.ID, nil))
	if code, msg := h.negErr(3); code != wantCode || msg != wantMsg {
		t.Fatalf("a revoked key opening the space again: %s %q, want what a space not held gets: %s %q", code, msg, wantCode, wantMsg)
	}
	// The key not revoked reads on, in its live session and in a new one.
	o.send(wire(tWant, 1, []byte{0}, d[:]))
	o.until(tVersions, 1)
	o.send(negOpen(t, 3, g.ID, nil))
	o.until(tNegMsg, 3)
}

// A private space is read by a keeper it names in sys.keepers (by key, with
// no note: a carrier, 06 §4.1) and by its members, over a session; a
// stranger's open, a carrier's it does not name, and a keeper's once the
// space names it no more get the answer a space not held gets.
func TestPrivateSpaceReadByItsKeeperNotAStranger(t *testing.T) {
	ctx := context.Background()
	b := newNode(t, nil)
	peers.SetRecheck(b.peers, 0)
	g, err := b.CreateSpace(ctx, "diary", &node.CreateOptions{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	keeperKey := transporttest.NewKey(t)
	if _, err := b.WriteKeepers(ctx, g.ID, []space.Keeper{{DID: keeperKey.DID(), Name: "a carrier"}}); err != nil {
		t.Fatal(err)
	}
	wantCode, wantMsg := notHeldAnswer(t, b)
	opens := func(self transport.Self) bool {
		h := newHostile(t, b, self)
		h.send(negOpen(t, 1, g.ID, nil))
		typ, body := h.next(1)
		switch typ {
		case tNegMsg:
			return true
		case tNegErr:
			if code, msg := decodeNegErr(t, body); code != wantCode || msg != wantMsg {
				t.Fatalf("refused with %s %q, want what a space not held gets: %s %q", code, msg, wantCode, wantMsg)
			}
			return false
		}
		t.Fatalf("a NEG-OPEN answered with 0x%02x", typ)
		return false
	}
	keeper := transport.Carrier(keeperKey)
	if !opens(keeper) {
		t.Fatal("the keeper the space names may not read it")
	}
	if opens(transport.Carrier(transporttest.NewKey(t))) {
		t.Fatal("a carrier the space does not name reads it")
	}
	if opens(transporttest.Session(t)) {
		t.Fatal("a stranger with a note of its own reads it")
	}
	// Named no more: its live session ends at the next answer, and it may
	// not open the space again.
	h := newHostile(t, b, keeper)
	h.send(negOpen(t, 1, g.ID, nil))
	h.until(tNegMsg, 1)
	if _, err := b.WriteKeepers(ctx, g.ID, nil); err != nil {
		t.Fatal(err)
	}
	if code, _ := h.negErr(1); code != peers.CodeNotHeld {
		t.Fatalf("a keeper's live session once the space names it no more: %s", code)
	}
	if opens(keeper) {
		t.Fatal("a keeper the space names no more reads it")
	}
}

// next reads messages until one for sid arrives, and returns its type and
// body; it fails after a minute or when the connection ends.
func (h *hostile) next(sid uint64) (byte, []byte) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		b, err := h.c.Recv(ctx)
		if err != nil {
			h.t.Fatalf("waiting for a message of session %d: %v", sid, err)
		}
		if s, n := binary.Uvarint(b[1:]); s == sid {
			return b[0], b[1+n:]
		}
	}
}

func decodeNegErr(t *testing.T, body []byte) (code, msg string) {
	t.Helper()
	var e struct{ Code, Message string }
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatal(err)
	}
	return e.Code, e.Message
}
