package carry

import (
	"encoding/base64"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// CodeBadInvite: text that is not a view-only invite.
const CodeBadInvite = "carry/invite"

// ViewInvitePrefix starts a view-only invite: "minca-view:" and base64url
// (no padding) of the canonical JSON {"v": 1, "genesis": {…}, "key":
// {keyId, key}?}. It lets its holder hold the space — its genesis, and for
// a private space the key in use — and write nothing: no invite key, no
// roles. A carrier's carry space comes to it this way (06 §4.2 step 3,
// §4.3: the invite carries the space's key).
const ViewInvitePrefix = "minca-view:"

// ViewInvite is a view-only invite to g, carrying k for a private space.
func ViewInvite(g *space.Genesis, k *seal.Key) (string, error) {
	o := canonical.NewObject("v", float64(1), "genesis", g.Object())
	if k != nil {
		o.Set("key", seal.InviteKey{Key: k}.Object())
	}
	b, err := canonical.Marshal(o)
	if err != nil {
		return "", err
	}
	return ViewInvitePrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// ParseViewInvite reads a view-only invite: the space's genesis and, when
// it carries one, its key (nil otherwise). A private space's invite that
// carries no key, or a public one's that does, is refused: a
// *record.Refusal, CodeBadInvite, field "invite".
func ParseViewInvite(text string) (*space.Genesis, *seal.Key, error) {
	bad := func(msg string) (*space.Genesis, *seal.Key, error) {
		return nil, nil, &record.Refusal{Code: CodeBadInvite, Field: "invite", Message: "not a view-only invite: " + msg}
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(text), ViewInvitePrefix)
	if !ok {
		return bad("it starts " + ViewInvitePrefix)
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return bad("base64url: " + err.Error())
	}
	v, err := canonical.Parse(raw)
	if err != nil {
		return bad(err.Error())
	}
	o, ok := v.(*canonical.Object)
	if !ok {
		return bad("it is {v, genesis, key?}")
	}
	for _, m := range o.Members {
		if m.Name != "v" && m.Name != "genesis" && m.Name != "key" {
			return bad("it has no member " + m.Name)
		}
	}
	if ver, _ := o.Get("v"); ver != float64(1) {
		return bad("v is 1")
	}
	gv, _ := o.Get("genesis")
	g, err := space.GenesisFromValue(gv)
	if err != nil {
		return bad("genesis: " + err.Error())
	}
	kv, hasKey := o.Get("key")
	if hasKey != g.Private() {
		return bad("a private space's invite carries its key, and only a private space's")
	}
	if !hasKey {
		return g, nil, nil
	}
	k, err := seal.ParseInviteKey(kv)
	if err != nil {
		return bad("key: " + err.Error())
	}
	return g, k, nil
}
