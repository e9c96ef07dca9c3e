package connect

import (
	"encoding/base64"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// keyProofLabel is the statement's "proof" member (06 §2.4).
const keyProofLabel = "minca/connect-key/v1"

// The two values of the statement's via (06 §2.4).
const (
	ViaPopup = "popup" // an app's own request, over postMessage
	ViaCode  = "code"  // a program's key, handed to the home over a connect code (§3)
)

// KeyProof is what a request's proof says: that the holder of Audience's
// key asks for it to be granted, for records only or not, by an app or
// over a code handed to the home at Origin (06 §2.4). Binding via and
// recordsOnly keeps a program's proof from asking for an app's connection
// or for more than records, and an app's from passing as a program's;
// binding the origin keeps a program's proof of use at no other home.
type KeyProof struct {
	Audience    string
	RecordsOnly bool
	// Origin is the origin of the home the key was handed to, with via
	// code; "" for an app's own request (via popup).
	Origin string
}

// Via is "code" for a proof naming a home's origin, else "popup".
func (p KeyProof) Via() string {
	if p.Origin != "" {
		return ViaCode
	}
	return ViaPopup
}

// Statement is the bytes the audience key signs: the UTF-8 of the canonical
// JSON {"audience", "origin"?, "proof": "minca/connect-key/v1",
// "recordsOnly", "via"} (06 §2.4). The one definition of the signed bytes.
func (p KeyProof) Statement() ([]byte, error) {
	o := canonical.NewObject("audience", p.Audience, "proof", keyProofLabel, "recordsOnly", p.RecordsOnly, "via", p.Via())
	if p.Origin != "" {
		o.Set("origin", p.Origin)
	}
	b, err := canonical.Marshal(o)
	if err != nil {
		return nil, refuse(CodeHomeProof, "proof", "the statement has no canonical form: "+err.Error())
	}
	return b, nil
}

// Sign makes the proof with the audience's own key: base64url (no padding)
// of its ES256 (P1363) signature over [KeyProof.Statement]. It refuses a
// signer that is not the audience.
func (p KeyProof) Sign(s identity.Signer) (string, error) {
	if s.DID() != p.Audience {
		return "", fmt.Errorf("minca/connect: a proof for %s signed by %s: only the audience's own key proves it", p.Audience, s.DID())
	}
	msg, err := p.Statement()
	if err != nil {
		return "", err
	}
	sig, err := s.Sign(msg)
	if err != nil {
		return "", fmt.Errorf("minca/connect: signing the key proof: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(sig), nil
}

// Check reports whether proof verifies under the audience's key over the
// statement (06 §2.5: "A home MUST refuse a request whose proof does not
// verify with the audience key over the statement of §2.4"). A refusal is
// a *Refusal, home/proof.
func (p KeyProof) Check(proof string) error {
	key, err := identity.ParseDID(p.Audience)
	if err != nil {
		return refuse(CodeHomeProof, "audience", "the audience names no key to verify the proof with: "+err.Error())
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(proof)
	if err != nil || len(sig) != 64 {
		return refuse(CodeHomeProof, "proof", "proof is not base64url (no padding) of a 64-byte P-256 signature")
	}
	msg, err := p.Statement()
	if err != nil {
		return err
	}
	if !key.Verify(msg, sig) {
		what := "an app's request (via popup)"
		if p.Origin != "" {
			what = "a key handed over a code to the home at " + p.Origin
		}
		return refuse(CodeHomeProof, "proof", fmt.Sprintf("proof does not verify under the audience over the statement for %s, recordsOnly %v (06 §2.4, §2.5)", what, p.RecordsOnly))
	}
	return nil
}
