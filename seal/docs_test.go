package seal

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/record"
)

var updateDocs = flag.Bool("update-docs", false, "make docs/private-spaces.md's worked examples again and write them into it")

const docsPath = "../docs/private-spaces.md"

var docMarker = regexp.MustCompile("(?s)<!-- example: ([a-z0-9-]+) -->\n```([a-z]*)\n(.*?)\n```")

// docBytes is n bytes counting up from first, as the examples' salt and
// nonce (a sealer takes them from crypto/rand).
func docBytes(first byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = first + byte(i)
	}
	return b
}

func docSecret(name string) []byte {
	s := sha256.Sum256([]byte("minca docs/private-spaces.md " + name))
	return s[:]
}

// docWorld is what the worked examples are made of: K₀ = ff fe … e0 (02
// §7.3), a private space naming it, K₁ and a member key from fixed
// secrets.
type docWorld struct {
	k0, k1  *Key
	member  *MemberKey
	space   string
	genesis string
	founder string
}

func newDocWorld(t *testing.T) *docWorld {
	w := &docWorld{k0: k0(t), founder: testRoot}
	var err error
	if w.k1, err = KeyFromBytes(docSecret("K1")); err != nil {
		t.Fatal(err)
	}
	if w.member, err = ParseMemberKey(docSecret("member key")); err != nil {
		t.Fatal(err)
	}
	g := canonical.NewObject("v", 1.0, "name", "Family notes", "visibility", "private", "founders", []any{w.founder},
		"createdAt", "2026-09-26T12:00:00.000Z", "nonce", "q0v8Jm2x", "encryptionKeyId", w.k0.ID())
	b, err := canonical.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	w.genesis, w.space = string(b), canonical.IDOf(b).String()
	return w
}

const (
	docColl = "app.note"
	docKey  = "akthxqofxox3iszhpi5j3zhl6a.mfrggzdfmztwq2lknnwg23tpoa"
)

func lines(ls ...string) string { return strings.Join(ls, "\n") }

// docExamples makes every example of the document whose bytes are the same
// each time: all but the box, whose ephemeral key is fresh.
func docExamples(t *testing.T, w *docWorld) map[string]string {
	out := map[string]string{}
	// The read seed is 06 §4.2's deriveReadSeed, worked here from the
	// formula; the package must agree.
	seed, err := hkdf.Key(sha256.New, w.k0.Bytes(), nil, "minca/read-key/v1", 32)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.k0.ReadSeed(); !bytes.Equal(got[:], seed) {
		t.Errorf("K₀'s read seed: the package makes %x, deriveReadSeed gives %x", got, seed)
	}
	out["k0"] = lines(
		"K₀ (hex)     "+hex.EncodeToString(w.k0.Bytes()),
		"K₀ (text)    "+w.k0.Text(),
		"keyId        "+w.k0.ID(),
		"read seed    "+hex.EncodeToString(seed),
		"readKey      "+w.k0.ReadKeyDID())
	out["genesis"] = lines("genesis  "+w.genesis, "space    "+w.space)

	salt, nonce := docBytes(0x00, saltLen), docBytes(0x10, nonceLen)
	sk := w.k0.newSubkey([saltLen]byte(salt))
	subkey := derive(w.k0.b[:], salt, infoSeal)
	content := collection.Content{Body: canonical.NewObject("text", "Buy milk", "done", false),
		Links: []record.Link{{Rel: "in", To: "akthxqofxox3iszhpi5j3zhl6a.list"}}}
	pt, err := Plaintext(content)
	if err != nil {
		t.Fatal(err)
	}
	bind := BodyBinding(w.space, docColl, docKey)
	ad := bind.ad(w.k0.ID())
	env := sealWith(nil, sk, nonce, pt, ad)
	out["seal-inputs"] = lines(
		"salt       "+hex.EncodeToString(salt),
		"subkey     "+hex.EncodeToString(subkey[:]),
		"nonce      "+hex.EncodeToString(nonce),
		"plaintext  "+string(pt),
		"ad         "+hex.EncodeToString(ad))
	out["envelope"] = wrapHex(env)
	body := (&Sealed{KeyID: w.k0.ID(), Envelope: env}).Object()
	bh, err := record.BodyHash(body)
	if err != nil {
		t.Fatal(err)
	}
	out["sealed-body"] = lines("body      "+canonText(t, body), "bodyHash  "+bh)

	// These illustrate spec rules, so what the document shows comes from
	// the spec, not from this package: 02 §7.3's vote key under K₀ is the
	// spec's own example, and the tags are 02 §8.2–§8.3's formula worked
	// here with the standard library. The package must agree with both.
	tk, oneKey := w.k0.TagKey(), w.k0.OneKey()
	tag1 := specTag(t, w.k0.Bytes(), "app.chat.message", "channel", "design")
	tag2 := specTag(t, w.k0.Bytes(), "std.message", "link:in", "mfrggzdfmztwq2lknnwg23tpoa")
	for _, c := range []struct{ coll, topic, value, want string }{
		{"app.chat.message", "channel", "design", tag1},
		{"std.message", "link:in", "mfrggzdfmztwq2lknnwg23tpoa", tag2},
	} {
		if got, err := collection.Tag(tk, c.coll, c.topic, c.value); err != nil || got != c.want {
			t.Errorf("the tag of %s %s %q under K₀: the package makes %s (%v), 02 §8.3 gives %s", c.coll, c.topic, c.value, got, err, c.want)
		}
	}
	def, err := collection.ParseDefinition(parse(t, stdVote))
	if err != nil {
		t.Fatal(err)
	}
	vote, k0hex := specVotePrivate(t)
	if k0hex != hex.EncodeToString(w.k0.Bytes()) {
		t.Fatalf("the spec's private vote key is under K₀ %s, the examples' is %x", k0hex, w.k0.Bytes())
	}
	if got, err := def.OnePerKey(oneKey, testRoot, collection.Content{Links: []record.Link{{Rel: "about", To: "akthxqofxox3iszhpi5j3zhl6a.poll"}}}); err != nil || got != vote {
		t.Errorf("the vote key under K₀: the package makes %s (%v), 02 §7.3 gives %s", got, err, vote)
	}
	out["derived"] = lines(
		"std.vote key (02 §7.3)                           "+vote,
		"app.chat.message channel \"design\" (02 §8.3)      "+tag1,
		"std.message link:in mfrggzdfmztwq2lknnwg23tpoa   "+tag2)

	file := []byte("hello, family\n")
	var sf appendWriter
	fs := newFileSealer(w.k0, w.space, &sf, [fileSaltLen]byte(docBytes(0x20, fileSaltLen)))
	fs.Write(file)
	fs.Close()
	sealedFile := sf.b
	out["file"] = lines(
		"file      "+fmt.Sprintf("%q", file),
		"salt      "+hex.EncodeToString(docBytes(0x20, fileSaltLen)),
		"sealed    "+hex.EncodeToString(sealedFile),
		"files     "+canonText(t, []any{canonical.NewObject("hash", canonical.IDOf(sealedFile).String(), "size", float64(len(sealedFile)))}))

	earlierPT, _ := canonical.Marshal([]any{w.k0.Text()})
	k1sk := w.k1.newSubkey([saltLen]byte(docBytes(0x30, saltLen)))
	eenv := sealWith(nil, k1sk, docBytes(0x40, nonceLen), earlierPT, Binding{Purpose: PurposeEarlier, Space: w.space}.ad(w.k1.ID()))
	kc := &KeyChange{KeyID: w.k1.ID(), ReadKey: w.k1.ReadKeyDID(), Earlier: eenv}
	out["key-change"] = lines(
		"K₁ (text)   "+w.k1.Text(),
		"keyId       "+w.k1.ID(),
		"salt        "+hex.EncodeToString(docBytes(0x30, saltLen)),
		"nonce       "+hex.EncodeToString(docBytes(0x40, nonceLen)),
		"earlier pt  "+string(earlierPT),
		"key         "+KeyChangeKey(w.k1.ID()),
		"body        "+canonText(t, kc.Object()))
	out["member-key"] = lines(
		"scalar  "+hex.EncodeToString(w.member.Bytes()),
		"key     "+MemberKeyKey(w.founder),
		"body    "+canonText(t, (&MemberKeyRecord{Member: w.founder, Key: w.member.Public()}).Object()))
	out["invite-key"] = canonText(t, InviteKey{Key: w.k1}.Object())
	return out
}

// specTag is 02 §8.3's blind tag of a private space's body sealed with
// key K: base64url of the first 16 bytes of HMAC-SHA-256 under
// HKDF-SHA-256(K, salt "", info "minca/topic-tags/v1", 32) of
// collection ‖ 0x00 ‖ topic ‖ 0x00 ‖ canonical(value) — written from the
// spec's text with the standard library.
func specTag(t *testing.T, k []byte, coll, topic, value string) string {
	t.Helper()
	key, err := hkdf.Key(sha256.New, k, nil, "minca/topic-tags/v1", 32)
	if err != nil {
		t.Fatal(err)
	}
	v, err := json.Marshal(value) // a plain string's canonical JSON
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(coll + "\x00" + topic + "\x00"))
	m.Write(v)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// specVotePrivate is 02 §7.3's example vote key in a private space, and
// the K₀ it is under, from the spec's vectors.
func specVotePrivate(t *testing.T) (key, k0hex string) {
	t.Helper()
	b, err := os.ReadFile("../testdata/spec-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		OnePer struct {
			VotePrivate struct {
				K0  string `json:"k0_hex"`
				Key string `json:"key"`
			} `json:"vote_private"`
		} `json:"onePer_02_7_3"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.OnePer.VotePrivate.Key == "" {
		t.Fatalf("the spec's vectors have no private vote key: %v", err)
	}
	return v.OnePer.VotePrivate.Key, v.OnePer.VotePrivate.K0
}

func canonText(t *testing.T, v any) string {
	b, err := canonical.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wrapHex writes bytes as hex, 32 bytes a line.
func wrapHex(b []byte) string {
	var ls []string
	for len(b) > 32 {
		ls = append(ls, hex.EncodeToString(b[:32]))
		b = b[32:]
	}
	return strings.Join(append(ls, hex.EncodeToString(b)), "\n")
}

// docBox is the box example: K₁ boxed to the member key, as a sys.box
// record's key and body.
func docBox(t *testing.T, w *docWorld) string {
	b, err := NewBox(w.k1, w.space, w.founder, w.member.Public())
	if err != nil {
		t.Fatal(err)
	}
	return lines("key   "+BoxKey(w.k1.ID(), w.founder), "body  "+canonText(t, b.Object()))
}

// checkDocBox opens the document's box with the member key: it must hold
// K₁, at the key the document gives.
func checkDocBox(t *testing.T, w *docWorld, text string) {
	key, body, ok := strings.Cut(text, "\n")
	if !ok || strings.TrimSpace(strings.TrimPrefix(key, "key")) != BoxKey(w.k1.ID(), w.founder) {
		t.Fatalf("the box example's key line: %q", key)
	}
	b, err := ParseBox(parse(t, strings.TrimSpace(strings.TrimPrefix(body, "body"))))
	if err != nil {
		t.Fatal(err)
	}
	k, err := b.Open(w.member, w.space)
	if err != nil || !k.Equal(w.k1) {
		t.Fatalf("the box example does not open to K₁: %v", err)
	}
}

// The worked examples of docs/private-spaces.md are this package's output:
// each is made again here and must be the document's, byte for byte; the
// box, made with a fresh ephemeral key, must open to K₁. Every example
// also opens through the package's own readers.
func TestDocExamples(t *testing.T) {
	w := newDocWorld(t)
	want := docExamples(t, w)
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	if *updateDocs {
		doc = docMarker.ReplaceAllFunc(doc, func(m []byte) []byte {
			sub := docMarker.FindSubmatch(m)
			name, lang := string(sub[1]), string(sub[2])
			text, ok := want[name]
			if name == "box" {
				text, ok = docBox(t, w), true
			}
			if !ok {
				t.Fatalf("the document names an example %q this test does not make", name)
			}
			return []byte("<!-- example: " + name + " -->\n```" + lang + "\n" + text + "\n```")
		})
		if err := os.WriteFile(docsPath, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found := map[string]bool{}
	for _, m := range docMarker.FindAllSubmatch(doc, -1) {
		name, text := string(m[1]), string(m[3])
		found[name] = true
		if name == "box" {
			checkDocBox(t, w, text)
			continue
		}
		if want[name] != text {
			t.Errorf("example %s in %s differs from what the package makes:\n got:\n%s\nwant:\n%s\n(go test ./seal -run TestDocExamples -update-docs writes it)", name, docsPath, text, want[name])
		}
	}
	for name := range want {
		if !found[name] {
			t.Errorf("%s has no example %s", docsPath, name)
		}
	}
	if !found["box"] {
		t.Errorf("%s has no example box", docsPath)
	}

	// The examples read back through the package.
	env, _ := hex.DecodeString(strings.ReplaceAll(want["envelope"], "\n", ""))
	o, err := OpenBody(w.k0, w.space, docColl, docKey, (&Sealed{KeyID: w.k0.ID(), Envelope: env}).Object())
	if err != nil || canonText(t, o.Body) != `{"done":false,"text":"Buy milk"}` || len(o.Links) != 1 {
		t.Fatalf("the example envelope: %v", err)
	}
	r, _ := NewKeyring(w.space, w.k0.ID())
	r.Offer(w.k1)
	kc, _, _ := strings.Cut(want["key-change"][strings.Index(want["key-change"], "body")+len("body"):], "\n")
	c, err := ReadKeyChange(parse(t, strings.TrimSpace(kc)))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Take(c); err != nil || len(r.Keys()) != 2 {
		t.Fatalf("the example key change: %v", err)
	}
	fileLine := strings.Split(want["file"], "\n")[2]
	sealedFile, _ := hex.DecodeString(strings.TrimSpace(strings.TrimPrefix(fileLine, "sealed")))
	if got, err := r.OpenFile(sealedFile); err != nil || !bytes.Equal(got, []byte("hello, family\n")) {
		t.Fatalf("the example file: %q %v", got, err)
	}
}
