package connect_test

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/connect/internal/channel"
)

var updateDocs = flag.Bool("update-docs", false, "compute docs/connect.md's worked examples again and write them into it")

const docsPath = "../docs/connect.md"

var exampleBlock = regexp.MustCompile("(?s)<!-- example: ([a-z-]+) -->\n```text\n(.*?)\n```")

// docScalar is a worked example's ephemeral scalar, the same every time.
func docScalar(name string) []byte {
	s := sha256.Sum256([]byte("minca docs/connect.md " + name))
	return s[:]
}

// docExamples computes docs/connect.md's worked examples: the spec's code,
// its room and link; an exchange on it with the ephemeral keys of two
// fixed scalars — points, commitment, shared point, keys, check — and the
// first two sealed messages the home sends.
func docExamples(t *testing.T) map[string]string {
	vec, proof := specVectors(t)
	code, err := connect.CodeIn("mc_" + vec.Secret)
	if err != nil {
		t.Fatal(err)
	}
	// The code's room and link illustrate 06 §3, so the document shows the
	// spec's own values, and the package must make them.
	if code.Room() != vec.Room || code.Link("https://home.example/connect") != vec.Link {
		t.Errorf("the spec's code: the package makes room %s and link %s; 06 §3 gives %s and %s",
			code.Room(), code.Link("https://home.example/connect"), vec.Room, vec.Link)
	}
	ex := map[string]string{}
	ex["code"] = lines(
		"secret      "+hex.EncodeToString(code[:]),
		"code        "+code.String(),
		"room input  "+hex.EncodeToString(append([]byte("minca/code-room/v1"), code[:]...)),
		"room        "+vec.Room,
		"link        "+vec.Link,
	)
	ex["key-proof"] = lines("popup  "+proof.Popup, "code   "+proof.Code)

	o, err := channel.EphemeralFromScalar(docScalar("home"))
	if err != nil {
		t.Fatal(err)
	}
	j, err := channel.EphemeralFromScalar(docScalar("program"))
	if err != nil {
		t.Fatal(err)
	}
	commit := channel.Commit(j.Point())
	oPriv, _ := ecdh.P256().NewPrivateKey(docScalar("home"))
	jPub, _ := ecdh.P256().NewPublicKey(j.Point())
	z, err := oPriv.ECDH(jPub)
	if err != nil {
		t.Fatal(err)
	}
	ikm := append(append([]byte{}, z...), code[:]...)
	transcript := append(append([]byte{}, o.Point()...), j.Point()...)
	// The keys and the check are worked from the document's formulas with
	// the standard library, not by the package; both sides must agree.
	m := docMaterial(t, ikm, transcript)
	home, err := channel.Derive(channel.Code, code[:], true, o, j.Point())
	if err != nil {
		t.Fatal(err)
	}
	prog, err := channel.Derive(channel.Code, code[:], false, j, o.Point())
	if err != nil {
		t.Fatal(err)
	}
	if home.Check() != m.Check || prog.Check() != m.Check {
		t.Fatal("the sides' checks differ from the material's")
	}
	ex["exchange"] = lines(
		"o (scalar)  "+hex.EncodeToString(docScalar("home")),
		"j (scalar)  "+hex.EncodeToString(docScalar("program")),
		"O           "+hex.EncodeToString(o.Point()),
		"J           "+hex.EncodeToString(j.Point()),
		"code:hello  "+string(clearMsg(t, connect.MsgHello, "commit", commit[:])),
		"code:key    "+string(clearMsg(t, connect.MsgKey, "key", o.Point())),
		"code:point  "+string(clearMsg(t, connect.MsgPoint, "key", j.Point())),
		"Z           "+hex.EncodeToString(z),
		"ikm         "+hex.EncodeToString(ikm),
		"key offer   "+hex.EncodeToString(m.OfferKey),
		"key join    "+hex.EncodeToString(m.JoinKey),
		"check       "+m.Check,
	)
	aad0, _ := channel.AAD(channel.Code, connect.MsgHome, 0)
	aad1, _ := channel.AAD(channel.Code, connect.MsgHeard, 1)
	homeMsg := sealed(t, home, connect.MsgHome, canonical.NewObject("origin", "https://home.example"))
	heardMsg := sealed(t, home, connect.MsgHeard, canonical.NewObject())
	for _, msg := range [][]byte{homeMsg, heardMsg} {
		if _, err := openMsg(t, prog, msg); err != nil {
			t.Fatal(err)
		}
	}
	_, p := readMsg(t, homeMsg)
	env, _ := base64.RawURLEncoding.DecodeString(p.(string))
	// The home sealed it under the offer key the formulas give: AES-256-GCM,
	// nonce 0, the sequence number's 4 bytes first (docs/connect.md).
	blk, err := aes.NewCipher(m.OfferKey)
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(blk)
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := gcm.Open(nil, make([]byte, 12), env[4:], aad0); err != nil || string(pt) != `{"origin":"https://home.example"}` {
		t.Errorf("the home's first message does not open under the offer key the formulas give: %q %v", pt, err)
	}
	ex["sealed"] = lines(
		"aad #0       "+string(aad0),
		"nonce #0     "+hex.EncodeToString(make([]byte, 12)),
		"body #0      "+`{"origin":"https://home.example"}`,
		"envelope #0  "+hex.EncodeToString(env),
		"code:home    "+string(homeMsg),
		"aad #1       "+string(aad1),
		"code:heard   "+string(heardMsg),
	)
	return ex
}

func lines(l ...string) string { return strings.Join(l, "\n") }

// docMaterial is docs/connect.md's key schedule for a code exchange,
// written from its text: key(side) = HKDF-SHA-256(ikm, no salt,
// "minca/code-key/v1" ‖ transcript ‖ side, 32) for sides "offer" and
// "join", and check = uint32_be(HKDF-SHA-256(ikm, no salt,
// "minca/code-check/v1" ‖ transcript, 4)) mod 1000000, six digits.
func docMaterial(t *testing.T, ikm, transcript []byte) channel.Material {
	t.Helper()
	key := func(info string, n int) []byte {
		k, err := hkdf.Key(sha256.New, ikm, nil, info, n)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	c := key("minca/code-check/v1"+string(transcript), 4)
	return channel.Material{
		OfferKey: key("minca/code-key/v1"+string(transcript)+"offer", 32),
		JoinKey:  key("minca/code-key/v1"+string(transcript)+"join", 32),
		Check:    fmt.Sprintf("%06d", binary.BigEndian.Uint32(c)%1000000),
	}
}

// TestDocsConnectExamples: every worked example in docs/connect.md is what
// the code computes (go test -run DocsConnect -update-docs writes them).
func TestDocsConnectExamples(t *testing.T) {
	ex := docExamples(t)
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	out := exampleBlock.ReplaceAllStringFunc(string(doc), func(block string) string {
		m := exampleBlock.FindStringSubmatch(block)
		name, body := m[1], m[2]
		want, ok := ex[name]
		if !ok {
			t.Errorf("docs/connect.md has an example %q the test does not compute", name)
			return block
		}
		found[name] = true
		if body != want && !*updateDocs {
			t.Errorf("docs/connect.md's example %q is not what the code computes:\n%s\nwant:\n%s", name, body, want)
		}
		return fmt.Sprintf("<!-- example: %s -->\n```text\n%s\n```", name, want)
	})
	for name := range ex {
		if !found[name] {
			t.Errorf("docs/connect.md lacks the example %q", name)
		}
	}
	if *updateDocs {
		if err := os.WriteFile(docsPath, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Every reason code is in the doc's table.
	for _, c := range connect.Codes() {
		if !strings.Contains(string(doc), "`"+c+"`") {
			t.Errorf("docs/connect.md does not list the code %s", c)
		}
	}
}
