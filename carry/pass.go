package carry

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// Pass is a pass (06 §4.2): what a carrier holds to carry one space —
// its constitution and, for a private space, the read key seed of the key
// the account holds now, which only proves to peers that the carrier may
// take part (06 §4.1) and opens nothing. A sys.pass record at "pass:" ‖
// the space's id, body {v: 1, space, read?, readKey?}.
type Pass struct {
	Genesis *space.Genesis
	// Read is the read key seed (deriveReadSeed of the space key); nil
	// for a public space.
	Read *[32]byte
	// ReadKey is the read key's DID once the space's key has changed
	// since it began; "" for K₀.
	ReadKey string
}

const passPrefix = "pass:"

// ClosedKey is the sys.pass record that tells a carrier the account
// removed it: body {"v": 1, "closed": true} (06 §4.2).
const ClosedKey = "carry:closed"

// Closed is carry:closed's body.
func Closed() *canonical.Object { return canonical.NewObject("v", float64(1), "closed", true) }

// IsClosed reports whether an opened body is carry:closed's, exactly.
func IsClosed(body any) bool {
	b, err := canonical.Marshal(body)
	return err == nil && string(b) == `{"closed":true,"v":1}`
}

// PassKey is the sys.pass key of a space's pass.
func PassKey(spaceID string) string { return passPrefix + spaceID }

// NewPass is the pass for g: of a public space with k nil, else from the
// space key k the account holds now.
func NewPass(g *space.Genesis, k *seal.Key) *Pass {
	p := &Pass{Genesis: g}
	if k != nil {
		seed := k.ReadSeed()
		p.Read = &seed
		if k.ID() != g.EncryptionKeyID {
			p.ReadKey = k.ReadKeyDID()
		}
	}
	return p
}

// Value is the pass as a sys.pass body.
func (p *Pass) Value() *canonical.Object {
	o := canonical.NewObject("v", float64(1), "space", p.Genesis.Object())
	if p.Read != nil {
		o.Set("read", base64.RawURLEncoding.EncodeToString(p.Read[:]))
	}
	if p.ReadKey != "" {
		o.Set("readKey", p.ReadKey)
	}
	return o
}

// ReadKeyPair is the key the carrier proves to peers of a private space: the
// P-256 key of the read seed (docs/private-spaces.md §2).
func (p *Pass) ReadKeyPair() (*identity.PrivateKey, error) {
	if p.Read == nil {
		return nil, errors.New("minca/carry: a public space's pass has no read key")
	}
	return seal.ReadKey(*p.Read)
}

// ErrBadPass: a sys.pass body a carrier does not accept (06 §4.2).
var ErrBadPass = errors.New("minca/carry: not a pass a carrier accepts")

// ReadPass reads a sys.pass body at key and checks what a carrier MUST
// (06 §4.2): v is 1, the space is a genesis whose id is the one the key
// names ("the space hashes to its id"), a private space's pass holds its
// read seed (32 bytes, base64url) and a public one's none, and the seed's
// DID is the pass's readKey when it names one. Our genesis carries no
// readKey yet (docs/private-spaces.md §11), so a pass for K₀ is taken on
// the account's word: only passes standing in the account's own carry
// space reach here.
func ReadPass(key string, body any) (*Pass, error) {
	bad := func(format string, a ...any) (*Pass, error) {
		return nil, fmt.Errorf("%w: %s", ErrBadPass, fmt.Sprintf(format, a...))
	}
	id, ok := strings.CutPrefix(key, passPrefix)
	if !ok {
		return bad("the key %q is not pass:<space>", key)
	}
	o, ok := body.(*canonical.Object)
	if !ok {
		return bad("a pass is an object {v, space, read?, readKey?}")
	}
	for _, m := range o.Members {
		switch m.Name {
		case "v", "space", "read", "readKey":
		default:
			return bad("a pass has no member %q", m.Name)
		}
	}
	if v, _ := o.Get("v"); v != float64(1) {
		return bad("v is 1")
	}
	gv, _ := o.Get("space")
	g, err := space.GenesisFromValue(gv)
	if err != nil {
		return bad("space: %v", err)
	}
	if g.ID != id {
		return bad("the space hashes to %s, not %s", g.ID, id)
	}
	p := &Pass{Genesis: g}
	rv, hasRead := o.Get("read")
	if g.Private() != hasRead {
		return bad("a private space's pass holds its read seed, and only a private space's")
	}
	if hasRead {
		s, _ := rv.(string)
		b, err := base64.RawURLEncoding.Strict().DecodeString(s)
		if err != nil || len(b) != 32 {
			return bad("read is base64url of 32 bytes")
		}
		var seed [32]byte
		copy(seed[:], b)
		p.Read = &seed
	}
	if kv, ok := o.Get("readKey"); ok {
		s, isStr := kv.(string)
		if !isStr || p.Read == nil {
			return bad("readKey is a did:key, in a private space's pass")
		}
		p.ReadKey = s
		rk, err := seal.ReadKey(*p.Read)
		if err != nil {
			return bad("read: %v", err)
		}
		if rk.DID() != s {
			return bad("the read seed's key is %s, not the readKey %s", rk.DID(), s)
		}
	}
	return p, nil
}
