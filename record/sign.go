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
	p, err := Presign(unsigned, s)
	if err != nil {
		return nil, err
	}
	return p.Sign()
}

// Presigned is a version ready to be signed: its signed part (02 §3.2),
// and so its id, are fixed, so a writer can name it (as prev, as log.prev)
// before the signature exists, and sign many at once.
type Presigned struct {
	obj     *canonical.Object
	payload []byte
	id      string
	digest  canonical.ID
	s       identity.Signer
	// prov is the version Provisional made, which Sign copies with the
	// signature rather than reading the members and checking the shape
	// again (the signature is a string no shape check reads further).
	prov *Version
}

// Presign does what Sign does up to the signature: bodyHash, author,
// proof, the signed part and the id. unsigned is not changed.
func Presign(unsigned *canonical.Object, s identity.Signer) (*Presigned, error) {
	return presign(unsigned.Clone(), s)
}

// presign is [Presign] on an object the caller gives up.
func presign(o *canonical.Object, s identity.Signer) (*Presigned, error) {
	if err := presignMembers(o, s); err != nil {
		return nil, err
	}
	return presignPart(o, s)
}

// presignMembers sets what the signer and the body decide (02 §3.3):
// author, proof and bodyHash; id and signature are taken out.
func presignMembers(o *canonical.Object, s identity.Signer) error {
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
			return fmt.Errorf("minca/record: sign: a version that is not a delete needs a body")
		}
		h, err := BodyHash(body)
		if err != nil {
			return fmt.Errorf("minca/record: sign: body: %w", err)
		}
		o.Set("bodyHash", h)
	}
	return nil
}

// presignPart fixes the signed part of o, whose members are all set, and
// so its id (02 §3.2).
func presignPart(o *canonical.Object, s identity.Signer) (*Presigned, error) {
	payload, err := AppendSignedPart(make([]byte, 0, signedPartCap), o)
	if err != nil {
		return nil, fmt.Errorf("minca/record: sign: %w", err)
	}
	d := canonical.IDOf(payload)
	return &Presigned{obj: o, payload: payload, id: d.String(), digest: d, s: s}, nil
}

// ID is the id the version will have.
func (p *Presigned) ID() string { return p.id }

// Digest is the digest [Presigned.ID] names.
func (p *Presigned) Digest() canonical.ID { return p.digest }

func (p *Presigned) version(sig string) (*Version, error) {
	out := &canonical.Object{Members: make([]canonical.Member, 0, len(p.obj.Members)+2)}
	out.Members = append(out.Members, canonical.Member{Name: "id", Value: p.id})
	out.Members = append(out.Members, p.obj.Members...)
	out.Members = append(out.Members, canonical.Member{Name: "signature", Value: sig})
	v, err := FromValue(out)
	if err != nil {
		return nil, fmt.Errorf("minca/record: sign: the version would be refused: %w", err)
	}
	return v, nil
}

// Provisional is the version with an empty signature: for the checks that
// read no signature (02 §4.7, §9.4), never to store or send. Each call
// makes a new Version sharing the envelope's values.
func (p *Presigned) Provisional() (*Version, error) {
	v, err := p.version("")
	if err != nil {
		return nil, err
	}
	p.prov = v
	return v, nil
}

// Sign signs the signed part and returns the version. Safe to call from
// another goroutine than Presign's, if the signer is (and Provisional,
// when called, happened before it).
func (p *Presigned) Sign() (*Version, error) {
	sig, err := p.s.Sign(p.payload)
	if err != nil {
		return nil, fmt.Errorf("minca/record: sign: %w", err)
	}
	text := base64.RawURLEncoding.EncodeToString(sig)
	if p.prov != nil {
		return p.prov.withSignature(text), nil
	}
	return p.version(text)
}

// BodyHash is the content id of the canonical body (02 §3.2).
func BodyHash(body any) (string, error) {
	id, err := canonical.ContentID(body)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}
