package seal

import (
	"fmt"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/record"
)

// Sealed is a sealed body as a version of a private space carries it (02
// §3.1): {"sealed": base64url(envelope), "keyId": the key's id}. bodyHash
// covers this object, so a stub reveals no more than the version (02
// §4.9).
type Sealed struct {
	KeyID    string
	Envelope []byte
}

// IsSealed reports whether a body has the shape of a sealed body: an object
// of exactly the members sealed and keyId. It says nothing of whether they
// are well formed; ParseSealed does.
func IsSealed(body any) bool {
	o, ok := body.(*canonical.Object)
	return ok && o.Len() == 2 && o.Has("sealed") && o.Has("keyId")
}

// ParseSealed reads a sealed body: an object with exactly sealed, the
// envelope in base64url without padding, and keyId, the form of a keyId.
func ParseSealed(body any) (*Sealed, error) {
	o, ok := body.(*canonical.Object)
	if !ok || o.Len() != 2 {
		return nil, fail(ErrMalformed, CodeShape, "body", "a sealed body is an object of exactly sealed and keyId (02 §3.1)")
	}
	sv, ok1 := o.Get("sealed")
	kv, ok2 := o.Get("keyId")
	s, ok3 := sv.(string)
	id, ok4 := kv.(string)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, fail(ErrMalformed, CodeShape, "body", "a sealed body is an object of exactly sealed and keyId, both strings (02 §3.1)")
	}
	if !ValidKeyID(id) {
		return nil, fail(ErrMalformed, CodeKeyID, "body.keyId", "a keyId is a content id: b and 52 characters of base32")
	}
	env, err := decode64(s, "body.sealed")
	if err != nil {
		return nil, err
	}
	if len(env) < Overhead || env[0] != format {
		return nil, fail(ErrMalformed, CodeShape, "body.sealed", fmt.Sprintf("an envelope is the format byte 0x01 and at least %d bytes, got %d", Overhead, len(env)))
	}
	return &Sealed{KeyID: id, Envelope: env}, nil
}

// Object is the sealed body as a version's body member.
func (s *Sealed) Object() *canonical.Object {
	return canonical.NewObject("keyId", s.KeyID, "sealed", b64.EncodeToString(s.Envelope))
}

// Plaintext is the plaintext a sealed body holds: the canonical JSON of
// {"body": body, "links": links}, links left out when there are none (02
// §5.1).
func Plaintext(c collection.Content) ([]byte, error) {
	o := canonical.NewObject("body", c.Body)
	if len(c.Links) > 0 {
		o.Set("links", record.LinksValue(c.Links))
	}
	b, err := canonical.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("minca/seal: the body has no canonical form: %w", err)
	}
	return b, nil
}

// SealBody seals a version's body and links together under k (02 §5.1),
// bound to its record: space, collection and key. The result is the
// version's body; the version carries no links member. A delete has no
// body and is not sealed.
func SealBody(k *Key, space, collection, key string, c collection.Content) (*canonical.Object, error) {
	pt, err := Plaintext(c)
	if err != nil {
		return nil, err
	}
	env := k.Seal(make([]byte, 0, len(pt)+Overhead), pt, BodyBinding(space, collection, key))
	return (&Sealed{KeyID: k.id, Envelope: env}).Object(), nil
}

// Opened is what a sealed body holds.
type Opened struct {
	collection.Content
	// KeyID names the key it was sealed with: tags are checked under it
	// (02 §8.2).
	KeyID string
	// BadLinks is why the links sealed with the body were set aside: a
	// reader that opens a sealed body with malformed links treats the
	// record as having none (02 §5.1). nil when they were well formed.
	BadLinks error
}

// OpenBody opens a sealed body under k, bound to the record that carries
// it. The body's keyId must be k's; errors are *Error: ErrMalformed,
// ErrNoKey (another key), ErrOpen, ErrPlaintext.
func OpenBody(k *Key, space, collection, key string, body any) (*Opened, error) {
	s, err := ParseSealed(body)
	if err != nil {
		return nil, err
	}
	return s.Open(k, BodyBinding(space, collection, key))
}

// Open opens the sealed body under k for binding b.
func (s *Sealed) Open(k *Key, b Binding) (*Opened, error) {
	if s.KeyID != k.id {
		return nil, fail(ErrNoKey, CodeNoKey, "body.keyId", "the body is sealed under "+s.KeyID+", not "+k.id)
	}
	pt, err := k.Open(nil, s.Envelope, b, "body.sealed")
	if err != nil {
		return nil, err
	}
	return readPlaintext(pt, s.KeyID)
}

// readPlaintext reads {"body", "links"?}, nothing else (02 §5.1).
func readPlaintext(pt []byte, keyID string) (*Opened, error) {
	v, err := canonical.Parse(pt)
	if err != nil {
		return nil, fail(ErrPlaintext, CodePlaintext, "body.sealed", "the sealed plaintext is not JSON: "+err.Error())
	}
	o, ok := v.(*canonical.Object)
	if !ok {
		return nil, fail(ErrPlaintext, CodePlaintext, "body.sealed", `the sealed plaintext is an object {"body", "links"?} (02 §5.1)`)
	}
	out := &Opened{KeyID: keyID}
	hasBody := false
	for _, m := range o.Members {
		switch m.Name {
		case "body":
			out.Body, hasBody = m.Value, true
		case "links":
			links, err := record.ParseLinks(m.Value)
			if err != nil {
				out.BadLinks = err
				continue
			}
			out.Links = links
		default:
			return nil, fail(ErrPlaintext, CodePlaintext, "body.sealed", fmt.Sprintf("the sealed plaintext has no member %q: it is {\"body\", \"links\"?} (02 §5.1)", m.Name))
		}
	}
	if !hasBody {
		return nil, fail(ErrPlaintext, CodePlaintext, "body.sealed", `the sealed plaintext has no body: it is {"body", "links"?} (02 §5.1)`)
	}
	return out, nil
}

// decode64 reads base64url without padding, strictly: no padding, no
// stray bits, and none of the line breaks Go's decoder would skip, so one
// envelope has one spelling.
func decode64(s, field string) ([]byte, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, fail(ErrMalformed, CodeShape, field, "base64url without padding has no line breaks")
	}
	b, err := b64.Strict().DecodeString(s)
	if err != nil {
		return nil, fail(ErrMalformed, CodeShape, field, "base64url without padding: "+err.Error())
	}
	return b, nil
}
