package node_test

import (
	"bytes"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os"
	"reflect"
	"strings"
	"testing"
)

// docs/carriers.md's worked example, worked again by hand from the formulas
// the documents give (docs/carriers.md §1, docs/private-spaces.md §2 and
// §15, 02 §2's content id, did:key of a P-256 key) with the standard
// library alone, never with the package: the account from its scalar, each
// K₀ and keyId, each genesis as its formula spells it, and each space as
// its genesis's content id. TestDocsCarriers requires the package to print
// the example byte for byte, so the two together hold the package to the
// formulas.
func TestDocsCarriersWorkedByHand(t *testing.T) {
	doc, err := os.ReadFile(carriersDoc)
	if err != nil {
		t.Fatal(err)
	}
	m := carryExample.FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/carriers.md has no carry-space example")
	}
	ex := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(m[2]), "\n"), "\n") {
		if len(l) < 15 {
			t.Fatalf("an example line without a value: %q", l)
		}
		name := strings.TrimSpace(string([]rune(l)[:13]))
		// Indented lines belong to the line above; those below the
		// registry's are named for it.
		if strings.HasPrefix(l, "  ") && ex["registry info"] != "" {
			name = "registry " + name
		}
		ex[name] = string([]rune(l)[14:])
	}
	scalarHex, ok := strings.CutSuffix(ex["account key"], " (its scalar)")
	scalar, err := hex.DecodeString(scalarHex)
	if !ok || err != nil || len(scalar) != 32 {
		t.Fatalf("the example's account key %q is not a 32-byte scalar", ex["account key"])
	}
	if s := sha256.Sum256([]byte("minca docs/spaces.md ada")); !bytes.Equal(scalar, s[:]) {
		t.Fatal("the account key is not Ada's, SHA-256 of `minca docs/spaces.md ada`, as the page says")
	}
	account := didKeyP256(t, scalar)
	if ex["account"] != account {
		t.Errorf("account: the page shows %s, its scalar's did:key is %s", ex["account"], account)
	}

	carrier := ex["carrier"]
	info := "minca/carry-key/v1|" + carrier + "|0"
	if ex["info"] != info {
		t.Errorf("info: the page shows %q, the formula gives %q", ex["info"], info)
	}
	k0 := hkdfKey(t, scalar, info)
	checkKey(t, "K₀", ex["K₀ (text)"], ex["keyId"], k0)
	wantGenesis := map[string]any{"v": 1.0, "name": "carry", "visibility": "private", "founders": []any{account},
		"createdAt": "2026-01-01T00:00:00.000Z", "nonce": "minca/carry-space/v1", "account": true, "encryptionKeyId": keyID(t, k0)}
	checkGenesis(t, "the carry space", ex["genesis"], ex["space"], wantGenesis)
	// Generation 1: another key, so another genesis and space.
	k1 := hkdfKey(t, scalar, "minca/carry-key/v1|"+carrier+"|1")
	wantGenesis["encryptionKeyId"] = keyID(t, k1)
	g1, _ := json.Marshal(wantGenesis) // encoding/json sorts keys; these values are plain
	if got := contentID(g1); ex["space, gen 1"] != got {
		t.Errorf("space, gen 1: the page shows %s, the formula gives %s", ex["space, gen 1"], got)
	}
	if want := "carrier:" + ex["space"]; ex["sys.carrier"] != want {
		t.Errorf("sys.carrier: the page shows %s, want %s", ex["sys.carrier"], want)
	}

	if ex["registry info"] != "minca/registry-key/v1" {
		t.Errorf("registry info: %q, want minca/registry-key/v1 (docs/private-spaces.md §15)", ex["registry info"])
	}
	rk := hkdfKey(t, scalar, "minca/registry-key/v1")
	checkKey(t, "the registry's K₀", ex["registry K₀ (text)"], ex["registry keyId"], rk)
	checkGenesis(t, "the registry", ex["registry genesis"], ex["registry"], map[string]any{"v": 1.0, "name": "account",
		"visibility": "private", "founders": []any{account}, "createdAt": "2026-01-01T00:00:00.000Z",
		"nonce": "minca/account-registry/v2", "account": true, "encryptionKeyId": keyID(t, rk)})
	id, legacy, ok := strings.Cut(ex["registry before v2"], " (public: ")
	checkGenesis(t, "the registry before v2", strings.TrimSuffix(legacy, ")"), id, map[string]any{"v": 1.0, "name": "account",
		"visibility": "public", "founders": []any{account}, "createdAt": "2026-01-01T00:00:00.000Z",
		"nonce": "minca/account-registry/v1", "account": true})
	if !ok {
		t.Errorf("before v2: %q", ex["registry before v2"])
	}
	if want := "pass:" + ex["registry"]; ex["sys.pass"] != want {
		t.Errorf("sys.pass: the page shows %s, want %s", ex["sys.pass"], want)
	}
}

// hkdfKey is HKDF-SHA-256 of ikm with an empty salt, 32 bytes.
func hkdfKey(t *testing.T, ikm []byte, info string) []byte {
	t.Helper()
	k, err := hkdf.Key(sha256.New, ikm, nil, info, 32)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// keyID is docs/private-spaces.md §2's keyId: "b" and the lower-case
// base32 of HKDF(K, info "minca/key-id/v1").
func keyID(t *testing.T, k []byte) string {
	return "b" + lowerBase32.EncodeToString(hkdfKey(t, k, "minca/key-id/v1"))
}

// contentID is 02 §2's content id of bytes.
func contentID(b []byte) string {
	d := sha256.Sum256(b)
	return "b" + lowerBase32.EncodeToString(d[:])
}

// checkKey requires the page's key text (base64url, no padding) and keyId
// to be k's.
func checkKey(t *testing.T, what, text, id string, k []byte) {
	t.Helper()
	if want := base64.RawURLEncoding.EncodeToString(k); text != want {
		t.Errorf("%s: the page shows %s, the formula gives %s", what, text, want)
	}
	if want := keyID(t, k); id != want {
		t.Errorf("%s's keyId: the page shows %s, the formula gives %s", what, id, want)
	}
}

// checkGenesis requires the page's genesis to be the one the formula
// spells, in canonical form (keys sorted, no spaces), and the page's space
// to be its content id.
func checkGenesis(t *testing.T, what, text, space string, want map[string]any) {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("%s's genesis %q: %v", what, text, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s's genesis: the page shows %v, the formula gives %v", what, got, want)
	} else if canon, _ := json.Marshal(want); string(canon) != text {
		t.Errorf("%s's genesis is not in canonical form: %s, want %s", what, text, canon)
	}
	if id := contentID([]byte(text)); space != id {
		t.Errorf("%s: the page shows %s, its genesis's content id is %s", what, space, id)
	}
}

// didKeyP256 is the did:key of the P-256 key with this scalar: "did:key:z"
// and base58btc of the multicodec p256-pub (0x1200, varint 0x80 0x24)
// before the compressed point.
func didKeyP256(t *testing.T, scalar []byte) string {
	t.Helper()
	priv, err := ecdh.P256().NewPrivateKey(scalar)
	if err != nil {
		t.Fatal(err)
	}
	pub := priv.PublicKey().Bytes() // 0x04 ‖ X ‖ Y
	compressed := append([]byte{0x02 | pub[64]&1}, pub[1:33]...)
	return "did:key:z" + base58btc(append([]byte{0x80, 0x24}, compressed...))
}

// base58btc is the Bitcoin base58 alphabet's encoding, a leading 1 for
// each leading zero byte.
func base58btc(b []byte) string {
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	n := new(big.Int).SetBytes(b)
	var out []byte
	for base, mod := big.NewInt(58), new(big.Int); n.Sign() > 0; {
		n.DivMod(n, base, mod)
		out = append(out, alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}
