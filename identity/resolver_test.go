package identity

import (
	"testing"
)

// TestResolverExpandsHotKeys: a key resolved HotAfter times verifies
// through its table, with the same verdicts; at most Tables keys hold one,
// and a key used as much as the others does not take a table from them.
func TestResolverExpandsHotKeys(t *testing.T) {
	r := &Resolver{Tables: 2, HotAfter: 4}
	keys := make([]*PrivateKey, 3)
	for i := range keys {
		var err error
		if keys[i], err = GenerateKey(); err != nil {
			t.Fatal(err)
		}
	}
	payload := []byte("a signed part")
	sigs := make([][]byte, len(keys))
	for i, k := range keys {
		var err error
		if sigs[i], err = k.Sign(payload); err != nil {
			t.Fatal(err)
		}
	}
	use := func(i int) bool {
		k, err := r.Resolve(keys[i].DID())
		if err != nil {
			t.Fatal(err)
		}
		bad := append([]byte(nil), sigs[i]...)
		bad[10] ^= 1
		if k.Verify(payload, bad) || k.Verify([]byte("another"), sigs[i]) {
			t.Fatalf("key %d: a broken signature verifies (fast %v)", i, k.fast.Load() != nil)
		}
		if !k.Verify(payload, sigs[i]) {
			t.Fatalf("key %d: its signature does not verify (fast %v)", i, k.fast.Load() != nil)
		}
		return k.fast.Load() != nil
	}
	fast := func() (n []bool) {
		for _, k := range keys {
			pk, _ := r.Resolve(k.DID())
			n = append(n, pk.fast.Load() != nil)
		}
		return n
	}
	if use(0) {
		t.Fatal("a key used once has a table")
	}
	for range 4 {
		use(0)
		use(1)
	}
	if got := fast(); !got[0] || !got[1] || got[2] {
		t.Fatalf("after keys 0 and 1 were used 5 and 4 times: tables %v, want [true true false]", got)
	}
	// Key 2 is used as often as 0 and 1: it does not take a table.
	for range 12 {
		use(0)
		use(1)
		use(2)
	}
	if got := fast(); !got[0] || !got[1] || got[2] {
		t.Fatalf("key 2 used as much as 0 and 1: tables %v, want [true true false]", got)
	}
	// Key 1 falls silent: key 2 takes its table.
	for range 12 {
		use(0)
		use(2)
	}
	if got := fast(); !got[0] || got[1] || !got[2] {
		t.Fatalf("key 1 silent: tables %v, want [true false true]", got)
	}
	if len(r.hot) > 2 {
		t.Fatalf("%d tables held, bound 2", len(r.hot))
	}
}
