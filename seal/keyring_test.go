package seal

import (
	"encoding/json"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/record"
)

// A space's life: K₀, a key change to K₁ after a removal, another to K₂; a
// member who joins with K₂ in its invite reads everything ever sealed.
func TestKeyChain(t *testing.T) {
	first := NewKey()
	alice, _ := NewKeyring(testSpace, first.ID())
	if !alice.Offer(first) {
		t.Fatal("K₀ is taken when offered")
	}
	bodies := map[string]*canonical.Object{}
	seal := func(r *Keyring, heads []Head, text string) {
		k, err := r.Current(heads)
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.SealBody(k.ID(), "app.note", "owner."+text, collection.Content{Body: text})
		if err != nil {
			t.Fatal(err)
		}
		bodies[text] = b
	}
	seal(alice, []Head{{KeyID: first.ID()}}, "zero")

	k1, c1, err := alice.NewKeyChange()
	if err != nil {
		t.Fatal(err)
	}
	if c1.KeyID != k1.ID() || c1.ReadKey != k1.ReadKeyDID() {
		t.Fatalf("%+v", c1)
	}
	seal(alice, []Head{{KeyID: k1.ID()}}, "one")
	k2, c2, err := alice.NewKeyChange()
	if err != nil {
		t.Fatal(err)
	}
	seal(alice, []Head{{KeyID: k2.ID()}}, "two")

	// The key changes travel as sys.key bodies.
	read := func(c *KeyChange) *KeyChange {
		rc, err := ReadKeyChange(parse(t, canon(t, c.Object())))
		if err != nil {
			t.Fatal(err)
		}
		return rc
	}
	// Ben joins with K₂ from his invite.
	invite := parse(t, canon(t, InviteKey{Key: k2}.Object()))
	ik, err := ParseInviteKey(invite)
	if err != nil {
		t.Fatal(err)
	}
	ben, _ := NewKeyring(testSpace, first.ID())
	if ben.Offer(ik) {
		t.Fatal("a later key is not taken before its key change")
	}
	if _, ok := ben.Key(k2.ID()); ok {
		t.Fatal("an offered key is held as taken")
	}
	wantErr(t, ben.Take(read(c1)), ErrNoKey, CodeNoKey) // he has no K₁ yet
	if err := ben.Take(read(c2)); err != nil {
		t.Fatal(err)
	}
	if len(ben.Keys()) != 3 {
		t.Fatalf("ben holds %d keys", len(ben.Keys()))
	}
	for text, b := range bodies {
		o, err := ben.OpenBody("app.note", "owner."+text, b)
		if err != nil || o.Body != text {
			t.Fatalf("%s: %v", text, err)
		}
	}
	if ok, _ := ben.OneKey(); ok != first.OneKey() {
		t.Fatal("ben's oneKey is not K₀'s")
	}
	if tk, ok := ben.TagKey(k1.ID()); !ok || tk != k1.TagKey() {
		t.Fatal("ben's tag key for K₁")
	}

	// A removed member with only K₀ and K₁ reads nothing sealed under K₂.
	mallory, _ := NewKeyring(testSpace, first.ID())
	mallory.Offer(first)
	mallory.Offer(k1)
	if err := mallory.Take(read(c1)); err != nil {
		t.Fatal(err)
	}
	if _, err := mallory.OpenBody("app.note", "owner.one", bodies["one"]); err != nil {
		t.Fatal(err)
	}
	_, err = mallory.OpenBody("app.note", "owner.two", bodies["two"])
	wantErr(t, err, ErrNoKey, CodeNoKey)
	wantErr(t, mallory.Take(read(c2)), ErrNoKey, CodeNoKey)
}

// 02 §7.3: a reader takes no key from a key change whose earlier leaves K₀
// out — not the earlier keys, not its own.
func TestKeyChainWithoutFirst(t *testing.T) {
	first, k1, k2 := NewKey(), NewKey(), NewKey()
	if _, err := NewKeyChange(testSpace, first.ID(), k2, []*Key{k1}); err == nil {
		t.Fatal("a writer makes a key change without K₀")
	}
	// Made by hand, as a faulty or hostile writer would.
	forge := func(next *Key, earlier []string) *KeyChange {
		pt, _ := json.Marshal(earlier)
		return &KeyChange{KeyID: next.ID(), ReadKey: next.ReadKeyDID(), Earlier: next.Seal(nil, pt, Binding{Purpose: PurposeEarlier, Space: testSpace})}
	}
	for name, c := range map[string]*KeyChange{
		"without K₀":      forge(k2, []string{k1.Text()}),
		"with itself":     forge(k2, []string{first.Text(), k2.Text()}),
		"not keys":        forge(k2, []string{first.Text(), "x"}),
		"empty":           forge(k2, []string{}),
		"another readKey": {KeyID: k2.ID(), ReadKey: k1.ReadKeyDID(), Earlier: forge(k2, []string{first.Text()}).Earlier},
	} {
		r, _ := NewKeyring(testSpace, first.ID())
		r.Offer(k2)
		wantErr(t, r.Take(c), ErrChain, CodeChain)
		if _, ok := r.Key(k2.ID()); ok || len(r.Keys()) != 0 {
			t.Fatalf("%s: a key was taken", name)
		}
		// The offer stays: a genuine change to k2 still gives it.
		if err := r.Take(forge(k2, []string{first.Text()})); err != nil || len(r.Keys()) != 2 {
			t.Fatalf("%s: after a broken change, the genuine one: %v", name, err)
		}
	}
	// Earlier sealed for another space does not open here.
	other := &KeyChange{KeyID: k2.ID(), ReadKey: k2.ReadKeyDID(), Earlier: k2.Seal(nil, []byte(`["`+first.Text()+`"]`), Binding{Purpose: PurposeEarlier, Space: otherSpace})}
	r, _ := NewKeyring(testSpace, first.ID())
	r.Offer(k2)
	wantErr(t, r.Take(other), ErrOpen, CodeOpen)
	if len(r.Keys()) != 0 {
		t.Fatal("a key was taken from a change that does not open")
	}
	// The genuine one is taken.
	good := forge(k2, []string{first.Text(), k1.Text()})
	if err := r.Take(good); err != nil || len(r.Keys()) != 3 {
		t.Fatalf("%v", err)
	}
}

func TestReadKeyChange(t *testing.T) {
	first, next := NewKey(), NewKey()
	c, err := NewKeyChange(testSpace, first.ID(), next, []*Key{first, first})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadKeyChange(c.Object())
	if err != nil || back.KeyID != next.ID() || back.ReadKey != c.ReadKey {
		t.Fatal(err)
	}
	if ks, err := back.Open(next, testSpace, first.ID()); err != nil || len(ks) != 1 || !ks[0].Equal(first) {
		t.Fatalf("%v", err)
	}
	good := c.Object()
	for _, edit := range []func(o *canonical.Object){
		func(o *canonical.Object) { o.Delete("readKey") },
		func(o *canonical.Object) { o.Set("readKey", "did:key:nope") },
		func(o *canonical.Object) { o.Set("keyId", "key") },
		func(o *canonical.Object) { o.Set("earlier", "AQ") },
		func(o *canonical.Object) { o.Set("earlier", 1.0) },
		func(o *canonical.Object) { o.Set("x", "y") },
	} {
		o := good.Clone()
		edit(o)
		if _, err := ReadKeyChange(o); err == nil {
			t.Fatalf("malformed key change %s reads", canon(t, o))
		}
	}
	// The space profile's reader still counts it: {keyId, …} at key:keyId.
	if KeyChangeKey(next.ID()) != "key:"+next.ID() || !record.ValidKey(KeyChangeKey(next.ID())) {
		t.Fatal(KeyChangeKey(next.ID()))
	}
}

// Which key seals: of the current keys held and not stale, the lowest
// keyId; none is an error, never an older key.
func TestCurrent(t *testing.T) {
	first := NewKey()
	r, _ := NewKeyring(testSpace, first.ID())
	r.Offer(first)
	a, ca, _ := r.NewKeyChange()
	b, cb, _ := r.NewKeyChange()
	_, _ = ca, cb
	lo, hi := a, b
	if hi.ID() < lo.ID() {
		lo, hi = hi, lo
	}
	pick := func(heads ...Head) (*Key, error) { return r.Current(heads) }
	if k, err := pick(Head{KeyID: hi.ID()}, Head{KeyID: lo.ID()}); err != nil || k != lo {
		t.Fatalf("concurrent heads: %v, %v", k, err)
	}
	if k, err := pick(Head{KeyID: hi.ID()}, Head{KeyID: lo.ID(), Stale: true}); err != nil || k != hi {
		t.Fatalf("a stale head: %v, %v", k, err)
	}
	if k, err := pick(Head{KeyID: NewKey().ID()}, Head{KeyID: hi.ID()}); err != nil || k != hi {
		t.Fatalf("a head not held: %v, %v", k, err)
	}
	_, err := pick(Head{KeyID: lo.ID(), Stale: true})
	wantErr(t, err, ErrNoCurrentKey, CodeNoCurrent)
	_, err = pick(Head{KeyID: NewKey().ID()})
	wantErr(t, err, ErrNoCurrentKey, CodeNoCurrent)
	_, err = pick()
	wantErr(t, err, ErrNoCurrentKey, CodeNoCurrent)
	if _, err := r.SealBody(NewKey().ID(), "c", "k", collection.Content{}); err == nil {
		t.Fatal("sealed under a key not held")
	}
}

func TestInviteKey(t *testing.T) {
	k := NewKey()
	got, err := ParseInviteKey(InviteKey{Key: k}.Object())
	if err != nil || !got.Equal(k) {
		t.Fatal(err)
	}
	_, err = ParseInviteKey(canonical.NewObject("keyId", NewKey().ID(), "key", k.Text()))
	wantErr(t, err, ErrMalformed, CodeKeyID)
	for _, bad := range []any{nil, canonical.NewObject("key", k.Text()), canonical.NewObject("keyId", k.ID(), "key", "short"),
		canonical.NewObject("keyId", k.ID(), "key", k.Text(), "x", 1.0)} {
		if _, err := ParseInviteKey(bad); err == nil {
			t.Fatalf("%v parses", bad)
		}
	}
}

// The read key: derived one way, the same from the same key, a did:key.
func TestReadKey(t *testing.T) {
	k := NewKey()
	first, again := k.ReadKeyDID(), k.ReadKeyDID()
	if first != again || first == NewKey().ReadKeyDID() {
		t.Fatal("read keys")
	}
	rk, err := ReadKey(k.ReadSeed())
	if err != nil || rk.DID() != k.ReadKeyDID() {
		t.Fatal(err)
	}
	sig, err := rk.Sign([]byte("challenge"))
	if err != nil || !rk.Public().Verify([]byte("challenge"), sig) {
		t.Fatal("the read key signs")
	}
	if seed := k.ReadSeed(); string(seed[:]) == string(k.Bytes()) {
		t.Fatal("the read seed is the key")
	}
}
