package record

import (
	"encoding/base64"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// ProofSigner is a Signer that acts under a note: versions it signs carry
// the note as their proof (02 §3.1, §9.3). Sign finds it by type assertion.
type ProofSigner interface {
	identity.Signer
	Proof() *canonical.Object
}

// Sign signs an unsigned version as 02 §3.3 says: it hashes the body into
// bodyHash (not on a delete), builds the signed part, signs its canonical
// bytes, computes the id from the same bytes, and returns the version. Any
// id, signature or bodyHash in unsigned is replaced; author is set to the
// signer's DID, and proof to its note when it is a [ProofSigner]. unsigned
// is not changed. The result must pass the shape checks, or it is refused:
// a writer does not sign what peers would refuse.
func Sign(unsigned *canonical.Object, s identity.Signer) (*Version, error) {
	o := unsigned.Clone()
	o.Delete("id")
	o.Delete("signature")
	o.Delete("bodyHash")
	o.Set("author", s.DID())
	if ps, ok := s.(ProofSigner); ok {
		if p := ps.Proof(); p != nil {
			o.Set("proof", p)
		}
	}
	if deleted, _ := o.Get("deleted"); deleted != true {
		body, ok := o.Get("body")
		if !ok {
			return nil, fmt.Errorf("minca/record: sign: a version that is not a delete needs a body")
		}
		h, err := BodyHash(body)
		if err != nil {
			return nil, fmt.Errorf("minca/record: sign: body: %w", err)
		}
		o.Set("bodyHash", h)
	}
	payload, err := AppendSignedPart(make([]byte, 0, 512), o)
	if err != nil {
		return nil, fmt.Errorf("minca/record: sign: %w", err)
	}
	sig, err := s.Sign(payload)
	if err != nil {
		return nil, fmt.Errorf("minca/record: sign: %w", err)
	}
	out := &canonical.Object{Members: make([]canonical.Member, 0, len(o.Members)+2)}
	out.Members = append(out.Members, canonical.Member{Name: "id", Value: canonical.IDOf(payload).String()})
	out.Members = append(out.Members, o.Members...)
	out.Members = append(out.Members, canonical.Member{Name: "signature", Value: base64.RawURLEncoding.EncodeToString(sig)})
	v, err := FromValue(out)
	if err != nil {
		return nil, fmt.Errorf("minca/record: sign: the version would be refused: %w", err)
	}
	return v, nil
}

// BodyHash is the content id of the canonical body (02 §3.2).
func BodyHash(body any) (string, error) {
	id, err := canonical.ContentID(body)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}
