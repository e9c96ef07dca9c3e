package node_test

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"github.com/minca-go/minca/carry"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/space/spacetest"
)

const carriersDoc = "../docs/carriers.md"

var updateDocs = flag.Bool("update-docs", false, "derive docs/carriers.md's worked example again and write it into it")

var carryExample = regexp.MustCompile("(?s)(<!-- example: carry-space -->\n```text\n)(.*?)(```)")

// docs/carriers.md's worked example: the carry space of docs/spaces.md's
// keeper for Ada's account, derived again and compared byte for byte.
func TestDocsCarriers(t *testing.T) {
	ada, err := spacetest.DocKey("ada")
	if err != nil {
		t.Fatal(err)
	}
	keeper, err := spacetest.DocKey("keeper")
	if err != nil {
		t.Fatal(err)
	}
	g0, k0, err := carry.DeriveSpace(ada, keeper.DID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	g1, _, err := carry.DeriveSpace(ada, keeper.DID(), 1)
	if err != nil {
		t.Fatal(err)
	}
	reg, rk, err := node.RegistrySpace(ada)
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := node.LegacyRegistryGenesis(ada.DID())
	if err != nil {
		t.Fatal(err)
	}
	inv, err := carry.ViewInvite(g0, k0)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := canonical.Marshal(canonical.NewObject("did", keeper.DID(), "name", "Ada's carrier", "since", "2026-10-01T09:00:00.000Z"))
	pass, _ := canonical.Marshal(carry.NewPass(reg, rk).Value())
	var b strings.Builder
	line := func(name, v string) { fmt.Fprintf(&b, "%-13s %s\n", name, v) }
	scalar := sha256.Sum256([]byte("minca docs/spaces.md ada")) // docKey's
	line("account key", hex.EncodeToString(scalar[:])+" (its scalar)")
	line("account", ada.DID())
	line("carrier", keeper.DID())
	line("info", "minca/carry-key/v1|"+keeper.DID()+"|0")
	line("K₀ (text)", k0.Text())
	line("keyId", k0.ID())
	line("genesis", string(g0.Canonical()))
	line("space", g0.ID)
	line("space, gen 1", g1.ID)
	line("sys.carrier", "carrier:"+g0.ID)
	line("  body", string(rec))
	line("invite", inv)
	line("registry info", "minca/registry-key/v1")
	line("  K₀ (text)", rk.Text())
	line("  keyId", rk.ID())
	line("  genesis", string(reg.Canonical()))
	line("registry", reg.ID)
	line("  before v2", legacy.ID+" (public: "+string(legacy.Canonical())+")")
	line("sys.pass", carry.PassKey(reg.ID))
	line("  body", string(pass))
	doc, err := os.ReadFile(carriersDoc)
	if err != nil {
		t.Fatal(err)
	}
	m := carryExample.FindSubmatchIndex(doc)
	if m == nil {
		t.Fatal("docs/carriers.md has no carry-space example")
	}
	if *updateDocs {
		out := string(doc[:m[4]]) + b.String() + string(doc[m[5]:])
		if err := os.WriteFile(carriersDoc, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := string(doc[m[4]:m[5]]); got != b.String() {
		t.Fatalf("docs/carriers.md's example differs from the code's:\n%s\nwant\n%s", got, b.String())
	}
	// The invite in the example reads back to the carry space and its key.
	g, k, err := carry.ParseViewInvite(inv)
	if err != nil || g.ID != g0.ID || !k.Equal(k0) {
		t.Fatalf("the example's invite: %v", err)
	}
}
