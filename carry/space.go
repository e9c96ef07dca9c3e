package carry

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// The collections of the carry profile (06 §4.2, §4.4; docs/carriers.md).
const (
	CarrierCollection    = "sys.carrier"    // the account's carriers, in its registry (06 §4.2)
	PassCollection       = "sys.pass"       // passes, and carry:closed, in a carry space
	WakeCollection       = "sys.wake"       // wakes, in a carry space (06 §4.4)
	LinkCollection       = "sys.link"       // the registry's links, copied into a carry space
	AutomationCollection = "sys.automation" // the account's own automations, in its registry (06 §2.11)
)

const (
	carrierPrefix = "carrier:"
	spaceName     = "carry"
	spaceNonce    = "minca/carry-space/v1"
	keyInfo       = "minca/carry-key/v1|"
	// createdAt is fixed, the account registry's own, so every device
	// derives the same genesis.
	createdAt = "2026-01-01T00:00:00.000Z"
	// MaxName bounds a carrier's name, in UTF-16 code units.
	MaxName = 80
	maxGen  = 1<<53 - 1
)

// DeriveSpace derives the carry space of the carrier did at generation gen
// for the account (06 §4.2 step 1): its first key K₀ is HKDF-SHA-256 of the
// account key's scalar with info "minca/carry-key/v1|" ‖ did ‖ "|" ‖ gen
// (decimal), and its genesis is private and the account's own, founded by
// the account alone, named "carry", created at the registry's time, with
// nonce "minca/carry-space/v1" and K₀'s keyId. Every device holding the
// account key derives the same space; nobody else can.
func DeriveSpace(account *identity.PrivateKey, did string, gen int64) (*space.Genesis, *seal.Key, error) {
	if gen < 0 || gen > maxGen {
		return nil, nil, fmt.Errorf("minca/carry: a carrier's gen is a non-negative integer, not %d", gen)
	}
	secret := account.DeriveSecret(keyInfo + did + "|" + strconv.FormatInt(gen, 10))
	k, err := seal.KeyFromBytes(secret[:])
	if err != nil {
		return nil, nil, err
	}
	g, err := space.NewGenesis(space.GenesisOptions{Name: spaceName, Private: true, Founders: []string{account.DID()},
		CreatedAt: createdAt, Nonce: spaceNonce, Account: true, EncryptionKeyID: k.ID()})
	if err != nil {
		return nil, nil, err
	}
	return g, k, nil
}

// Carrier is a sys.carrier record of the account's registry (06 §4.2):
// key "carrier:" ‖ the carry space's id, body {did, name, since, gen?,
// removed?}; a record from before carry spaces were derived also names its
// space and a view-only invite.
type Carrier struct {
	DID   string
	Name  string
	Since string
	Gen   int64
	// Space is the carry space: the record's key alone decides it.
	Space string
	// Removed is when the carrier was removed; "" while it is live.
	Removed string
	// Invite is a legacy record's view-only invite; "" otherwise.
	Invite string
}

// Live reports whether the account still uses the carrier.
func (c Carrier) Live() bool { return c.Removed == "" }

// Key is the record's key: "carrier:" ‖ its carry space.
func (c Carrier) Key() string { return carrierPrefix + c.Space }

// Value is the record's body.
func (c Carrier) Value() *canonical.Object {
	o := canonical.NewObject("did", c.DID, "name", c.Name, "since", c.Since)
	if c.Gen != 0 {
		o.Set("gen", float64(c.Gen))
	}
	if c.Removed != "" {
		o.Set("removed", c.Removed)
	}
	return o
}

// ReadCarrier reads a sys.carrier record, its body opened; ok is false for
// one that names no carry space: a key not of the form, a did that is not
// a P-256 did:key, or a gen that is not a non-negative integer (06 §4.2:
// "such a record is ignored").
func ReadCarrier(key string, body any) (Carrier, bool) {
	id, ok := strings.CutPrefix(key, carrierPrefix)
	if !ok || id == "" {
		return Carrier{}, false
	}
	o, ok := body.(*canonical.Object)
	if !ok {
		return Carrier{}, false
	}
	str := func(name string) (string, bool) {
		x, ok := o.Get(name)
		s, isStr := x.(string)
		return s, ok && isStr
	}
	c := Carrier{Space: id}
	if c.DID, ok = str("did"); !ok {
		return Carrier{}, false
	}
	if _, err := identity.ParseDID(c.DID); err != nil {
		return Carrier{}, false
	}
	c.Name, _ = str("name")
	c.Since, _ = str("since")
	c.Removed, _ = str("removed")
	c.Invite, _ = str("invite")
	if x, has := o.Get("gen"); has {
		f, isNum := x.(float64)
		if !isNum || f < 0 || f > maxGen || f != math.Trunc(f) {
			return Carrier{}, false
		}
		c.Gen = int64(f)
	}
	return c, true
}

// ValidName reports whether name fits a sys.carrier record: at most
// MaxName UTF-16 code units.
func ValidName(name string) bool { return canonical.UTF16Len(name) <= MaxName }
