package carry

import (
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
	return space.EncodeInviteText(ViewInvitePrefix, o)
}

// ParseViewInvite reads a view-only invite: the space's genesis and, when
// it carries one, its key (nil otherwise). A private space's invite that
// carries no key, or a public one's that does, is refused: a
// *record.Refusal, CodeBadInvite, field "invite".
func ParseViewInvite(text string) (*space.Genesis, *seal.Key, error) {
	bad := func(msg string) (*space.Genesis, *seal.Key, error) {
		return nil, nil, &record.Refusal{Code: CodeBadInvite, Field: "invite", Message: "not a view-only invite: " + msg}
	}
	_, g, k, err := space.DecodeInviteText(text, ViewInvitePrefix, "key")
	if err != nil {
		return bad(err.Error())
	}
	return g, k, nil
}
