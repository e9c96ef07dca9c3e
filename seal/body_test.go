package seal

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/record"
)

func TestKeyText(t *testing.T) {
	k := NewKey()
	if len(k.Text()) != 43 || !ValidKeyID(k.ID()) || len(k.ID()) != canonical.IDLen {
		t.Fatalf("key %q id %q", k.Text(), k.ID())
	}
	back, err := ParseKey(k.Text())
	if err != nil || !back.Equal(k) || back.ID() != k.ID() {
		t.Fatalf("round trip: %v", err)
	}
	if strings.Contains(k.String(), k.Text()) || !strings.Contains(k.String(), k.ID()) {
		t.Fatalf("String shows the key: %s", k)
	}
	if NewKey().Equal(k) {
		t.Fatal("two new keys are equal")
	}
	// keyId is HKDF-SHA-256(K, salt "", info "minca/key-id/v1") as a content id.
	want, _ := hkdf.Key(sha256.New, k.Bytes(), nil, "minca/key-id/v1", 32)
	if k.ID() != canonical.ID(want).String() {
		t.Fatalf("keyId %s, want %s", k.ID(), canonical.ID(want))
	}
	for _, bad := range []string{"", k.Text() + "A", k.Text()[:42] + "=", k.Text()[:20] + "\n" + k.Text()[20:42], strings.Repeat("*", 43)} {
		_, err := ParseKey(bad)
		wantErr(t, err, ErrMalformed, CodeKeyInvalid)
	}
	if _, err := KeyFromBytes(make([]byte, 31)); err == nil {
		t.Fatal("a 31-byte key")
	}
}

func TestBodyRoundTrip(t *testing.T) {
	k := NewKey()
	for _, c := range []collection.Content{
		{Body: parse(t, `{"text":"Buy milk","done":false}`)},
		{Body: parse(t, `{"choice":2}`), Links: []record.Link{{Rel: "about", To: "akthxqofxox3iszhpi5j3zhl6a.poll"}}},
		{Body: nil},
		{Body: parse(t, `"just a string"`), Links: []record.Link{{Rel: "in", To: "a"}, {Rel: "in", To: "b"}}},
	} {
		body, err := SealBody(k, testSpace, "app.todo.item", "akthxqofxox3iszhpi5j3zhl6a.x", c)
		if err != nil {
			t.Fatal(err)
		}
		if !IsSealed(body) || body.Len() != 2 {
			t.Fatalf("sealed body %s", canon(t, body))
		}
		if strings.Contains(canon(t, body), "milk") || strings.Contains(canon(t, body), "poll") {
			t.Fatalf("plaintext in the sealed body: %s", canon(t, body))
		}
		// Through text, as a version carries it.
		o, err := OpenBody(k, testSpace, "app.todo.item", "akthxqofxox3iszhpi5j3zhl6a.x", parse(t, canon(t, body)))
		if err != nil {
			t.Fatal(err)
		}
		if canon(t, o.Body) != canon(t, c.Body) || len(o.Links) != len(c.Links) || o.KeyID != k.ID() || o.BadLinks != nil {
			t.Fatalf("opened %s %v, sealed %s %v", canon(t, o.Body), o.Links, canon(t, c.Body), c.Links)
		}
		for i := range c.Links {
			if o.Links[i] != c.Links[i] {
				t.Fatalf("links %v, want %v", o.Links, c.Links)
			}
		}
	}
}

// 02 §5.1: the plaintext is {"body", "links"} with links left out when
// there are none.
func TestPlaintextForm(t *testing.T) {
	pt, err := Plaintext(collection.Content{Body: parse(t, `{"b":1,"a":2}`)})
	if err != nil || string(pt) != `{"body":{"a":2,"b":1}}` {
		t.Fatalf("%s %v", pt, err)
	}
	pt, _ = Plaintext(collection.Content{Body: parse(t, `{}`), Links: []record.Link{{Rel: "about", To: "x"}}})
	if string(pt) != `{"body":{},"links":[{"rel":"about","to":"x"}]}` {
		t.Fatalf("%s", pt)
	}
}

// 02 §5.1: malformed links are set aside, the body read; anything but
// body and links is refused.
func TestPlaintextLinks(t *testing.T) {
	o, err := readPlaintext([]byte(`{"body":1,"links":[{"rel":"Bad","to":"x"}]}`), "b")
	if err != nil || o.Links != nil || o.BadLinks == nil || o.Body != float64(1) {
		t.Fatalf("%+v %v", o, err)
	}
	for _, bad := range []string{`{"links":[]}`, `[1]`, `{"body":1,"extra":2}`, `not json`, `{"body":1,"body":2}`} {
		_, err := readPlaintext([]byte(bad), "b")
		wantErr(t, err, ErrPlaintext, CodePlaintext)
	}
}

// Tampering: a flipped bit anywhere, a sealed body moved to another
// record or space, another keyId, a truncated envelope — never opened.
func TestBodyTampering(t *testing.T) {
	k, other := NewKey(), NewKey()
	ring, _ := NewKeyring(testSpace, k.ID())
	ring.Offer(k)
	c := collection.Content{Body: parse(t, `{"secret":"s3cr3t"}`), Links: []record.Link{{Rel: "about", To: "x"}}}
	body, err := SealBody(k, testSpace, "app.note", "owner.key", c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSealed(body)
	if err != nil {
		t.Fatal(err)
	}
	env := s.Envelope

	// Every bit of the envelope after the format byte.
	for i := 1; i < len(env); i++ {
		for bit := range 8 {
			bad := bytes.Clone(env)
			bad[i] ^= 1 << bit
			_, err := (&Sealed{KeyID: k.ID(), Envelope: bad}).Open(k, BodyBinding(testSpace, "app.note", "owner.key"))
			wantErr(t, err, ErrOpen, CodeOpen)
		}
	}
	// The format byte.
	bad := bytes.Clone(env)
	bad[0] = 2
	_, err = ParseSealed((&Sealed{KeyID: k.ID(), Envelope: bad}).Object())
	wantErr(t, err, ErrMalformed, CodeShape)

	// Moved: another space, collection or key; each opens nowhere else.
	for _, b := range []Binding{
		BodyBinding(otherSpace, "app.note", "owner.key"),
		BodyBinding(testSpace, "app.other", "owner.key"),
		BodyBinding(testSpace, "app.note", "owner.other"),
		{Purpose: PurposeFile, Space: testSpace},
		{Purpose: PurposeEarlier, Space: testSpace},
	} {
		_, err := s.Open(k, b)
		wantErr(t, err, ErrOpen, CodeOpen)
	}
	// Fields that run into each other do not make the same binding.
	if bytes.Equal(BodyBinding(testSpace, "app.no", "te.owner.key").ad(k.ID()), BodyBinding(testSpace, "app.note", ".owner.key").ad(k.ID())) {
		t.Fatal("two bindings share their associated data")
	}

	// Another keyId: one the reader holds opens nothing; one it does not is
	// not tried.
	ring.Offer(other) // not taken: only K₀ is taken by an offer
	wrong := canonical.NewObject("keyId", other.ID(), "sealed", b64.EncodeToString(env))
	_, err = OpenBody(other, testSpace, "app.note", "owner.key", wrong)
	wantErr(t, err, ErrOpen, CodeOpen)
	_, err = ring.OpenBody("app.note", "owner.key", wrong)
	wantErr(t, err, ErrNoKey, CodeNoKey)
	_, err = OpenBody(other, testSpace, "app.note", "owner.key", body)
	wantErr(t, err, ErrNoKey, CodeNoKey)

	// Truncated: below the header and tag it is malformed; above, it does
	// not open.
	for _, n := range []int{0, 1, Overhead - 1} {
		_, err := ParseSealed(canonical.NewObject("keyId", k.ID(), "sealed", b64.EncodeToString(env[:n])))
		wantErr(t, err, ErrMalformed, CodeShape)
		_, err = k.Open(nil, env[:n], BodyBinding(testSpace, "app.note", "owner.key"), "body.sealed")
		wantErr(t, err, ErrMalformed, CodeShape)
	}
	for _, n := range []int{Overhead, len(env) - 1} {
		_, err := ring.OpenBody("app.note", "owner.key", canonical.NewObject("keyId", k.ID(), "sealed", b64.EncodeToString(env[:n])))
		wantErr(t, err, ErrOpen, CodeOpen)
	}

	// Malformed sealed bodies.
	for _, bad := range []string{
		`{"sealed":"AQ","keyId":"x"}`, `{"sealed":1,"keyId":"` + k.ID() + `"}`, `{"sealed":"a"}`, `[1,2]`, `null`,
		`{"sealed":"a","keyId":"` + k.ID() + `","x":1}`,
		`{"sealed":"` + b64.EncodeToString(env) + `=","keyId":"` + k.ID() + `"}`,
		`{"sealed":"` + b64.EncodeToString(env)[:30] + `\n` + b64.EncodeToString(env)[30:] + `","keyId":"` + k.ID() + `"}`,
	} {
		_, err := ring.OpenBody("app.note", "owner.key", parse(t, bad))
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("%s: %v", bad, err)
		}
	}

	// The genuine one still opens.
	o, err := ring.OpenBody("app.note", "owner.key", body)
	if err != nil || canon(t, o.Body) != `{"secret":"s3cr3t"}` {
		t.Fatalf("%v", err)
	}
}

// A sealed body's envelope is fresh each time: the same body sealed twice
// differs, and a sealer's salt changes after maxPerSubkey envelopes.
func TestEnvelopeFresh(t *testing.T) {
	k := NewKey()
	b := BodyBinding(testSpace, "c", "k")
	a1 := k.Seal(nil, []byte("same"), b)
	a2 := k.Seal(nil, []byte("same"), b)
	if bytes.Equal(a1, a2) {
		t.Fatal("two envelopes of one plaintext are equal")
	}
	if !bytes.Equal(a1[1:1+saltLen], a2[1:1+saltLen]) || bytes.Equal(a1[1+saltLen:headerLen], a2[1+saltLen:headerLen]) {
		t.Fatal("one sealer: same salt, fresh nonces")
	}
	k.mu.Lock()
	k.sealer.count = maxPerSubkey
	k.mu.Unlock()
	a3 := k.Seal(nil, []byte("same"), b)
	if bytes.Equal(a1[1:1+saltLen], a3[1:1+saltLen]) {
		t.Fatal("the salt did not change after maxPerSubkey envelopes")
	}
	// Every one still opens, from a key that never sealed (a reader).
	r, _ := KeyFromBytes(k.Bytes())
	for _, e := range [][]byte{a1, a2, a3} {
		if pt, err := r.Open(nil, e, b, "x"); err != nil || string(pt) != "same" {
			t.Fatalf("%s %v", pt, err)
		}
	}
	if len(a1) != len("same")+Overhead {
		t.Fatalf("overhead %d", len(a1)-4)
	}
}

func TestOpenVersion(t *testing.T) {
	k := NewKey()
	ring, _ := NewKeyring(testSpace, k.ID())
	ring.Offer(k)
	body, _ := SealBody(k, testSpace, "app.note", "owner.n", collection.Content{Body: parse(t, `{"a":1}`)})
	v := signed(t, testSpace, "app.note", "owner.n", body)
	o, err := ring.OpenVersion(v)
	if err != nil || canon(t, o.Body) != `{"a":1}` {
		t.Fatalf("%v", err)
	}
	// Opened again, it is the same; a copy with the same id and another
	// sealed text (a mangled copy) is opened afresh, and fails.
	if again, err := ring.OpenVersion(v); err != nil || again != o {
		t.Fatalf("opened again: %v", err)
	}
	s, _ := ParseSealed(v.Body)
	s.Envelope[len(s.Envelope)-1] ^= 1
	mangled := *v
	mangled.Body = s.Object()
	if _, err := ring.OpenVersion(&mangled); !errors.Is(err, ErrOpen) {
		t.Fatalf("a mangled copy with the genuine id: %v", err)
	}
	// A body not sealed in a private space.
	v = signed(t, testSpace, "app.note", "owner.n", parse(t, `{"a":1}`))
	if _, err := ring.OpenVersion(v); !errors.Is(err, ErrNotSealed) {
		t.Fatalf("%v", err)
	}
	// Another space's version.
	v = signed(t, otherSpace, "app.note", "owner.n", body)
	_, err = ring.OpenVersion(v)
	wantErr(t, err, ErrNoKey, CodeNoKey)
}

// One *Key seals and opens from many goroutines (go test -race).
func TestKeyConcurrent(t *testing.T) {
	k := NewKey()
	b := BodyBinding(testSpace, "c", "k")
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if g == 0 && i%50 == 0 {
					k.mu.Lock()
					if k.sealer != nil {
						k.sealer.count = maxPerSubkey // a new salt on the next seal
					}
					k.mu.Unlock()
				}
				env := k.Seal(nil, []byte{byte(i)}, b)
				pt, err := k.Open(nil, env, b, "x")
				if err != nil || len(pt) != 1 || pt[0] != byte(i) {
					t.Errorf("%v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
