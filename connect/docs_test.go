package connect_test

import (
	"crypto/ecdh"
	"crypto/sha256"
	"encoding/base64"
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
	ex := map[string]string{}
	ex["code"] = lines(
		"secret      "+hex.EncodeToString(code[:]),
		"code        "+code.String(),
		"room input  "+hex.EncodeToString(append([]byte("minca/code-room/v1"), code[:]...)),
		"room        "+code.Room(),
		"link        "+code.Link("https://home.example/connect"),
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
	m, err := channel.DeriveMaterial(channel.Code, ikm, transcript)
	if err != nil {
		t.Fatal(err)
	}
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
