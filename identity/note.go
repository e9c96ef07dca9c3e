package identity

import (
	"encoding/base64"
	"fmt"
	"math"
	"time"

	"github.com/minca-go/minca/canonical"
)

// NoteType is the type of every note of our profile (01 §7 in our profile).
const NoteType = "minca/ucan/dlg@1"

// maxSafeInt bounds exp and nbf: UCAN 1.0 refuses times outside ±(2^53 − 1).
const maxSafeInt = 1<<53 - 1

// Note is a delegation: iss lets aud do cmd about sub, where pol holds
// (06 §1.2, §2.5; 01 §7 in our profile). On the wire:
//
//	{"type": "minca/ucan/dlg@1",
//	 "payload": {iss, aud, sub, cmd, pol, exp?, nbf?, nonce, meta?},
//	 "sig": base64url(ES256 P1363 by iss over canonical {"payload", "type"})}
//
// A Note returned by [DecodeNote] has the right shape; whether it is valid
// is [Note.CheckSignature] and [Note.CheckTime], and what it grants is
// [Note.Grants]. A Note is immutable and safe to share between goroutines.
type Note struct {
	Iss, Aud, Sub, Cmd string
	Nonce              string
	Pol                []any             // the policy as written; see Policy
	Exp, Nbf           int64             // Unix seconds, when HasExp, HasNbf
	HasExp, HasNbf     bool              // absent: no end, valid from the epoch
	Meta               *canonical.Object // nil when absent
	Sig                string            // as written; decoded by CheckSignature

	obj       *canonical.Object
	policy    *Policy
	policyErr error
}

var (
	noteMembers    = []string{"type", "payload", "sig"}
	payloadMembers = []string{"iss", "aud", "sub", "cmd", "pol", "exp", "nbf", "nonce", "meta"}
)

// ParseNote reads a note from JSON text.
func ParseNote(data []byte) (*Note, error) {
	v, err := canonical.Parse(data)
	if err != nil {
		return nil, noteErr(CodeNoteShape, "", "not JSON: "+err.Error())
	}
	return DecodeNote(v)
}

// DecodeNote reads a note from a value of canonical's model and checks its
// shape: exactly the members above, each of its type (iss, aud, sub, nonce
// and sig strings, cmd a command path, pol a list, exp and nbf integers of
// at most 2^53 − 1 in magnitude, meta an object), none unknown, none null.
// It refuses with a *NoteError (note/shape, or note/command for a cmd that
// is a string but not a command). A malformed pol is not a shape error: the
// note decodes and grants nothing ([Note.Policy]).
func DecodeNote(v any) (*Note, error) {
	o, ok := v.(*canonical.Object)
	if !ok || o == nil {
		return nil, noteErr(CodeNoteShape, "", "a note is a JSON object {type, payload, sig}")
	}
	if err := onlyMembers(o, "", noteMembers); err != nil {
		return nil, err
	}
	n := &Note{obj: o}
	typ, err := stringMember(o, "", "type", true)
	if err != nil {
		return nil, err
	}
	if typ != NoteType {
		return nil, noteErr(CodeNoteShape, "type", fmt.Sprintf("type is %q, not %q", typ, NoteType))
	}
	if n.Sig, err = stringMember(o, "", "sig", true); err != nil {
		return nil, err
	}
	pv, ok := o.Get("payload")
	p, isObj := pv.(*canonical.Object)
	if !ok || !isObj || p == nil {
		return nil, noteErr(CodeNoteShape, "payload", "payload is an object {iss, aud, sub, cmd, pol, exp?, nbf?, nonce, meta?}")
	}
	if err := onlyMembers(p, "payload.", payloadMembers); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"iss", &n.Iss}, {"aud", &n.Aud}, {"sub", &n.Sub}, {"cmd", &n.Cmd}, {"nonce", &n.Nonce}} {
		if *f.dst, err = stringMember(p, "payload.", f.name, true); err != nil {
			return nil, err
		}
	}
	if err := CheckCommand(n.Cmd); err != nil {
		return nil, noteErr(CodeNoteCommand, "payload.cmd", fmt.Sprintf("cmd %q: %v", n.Cmd, err))
	}
	pol, ok := p.Get("pol")
	if n.Pol, isObj = pol.([]any); !ok || !isObj {
		return nil, noteErr(CodeNoteShape, "payload.pol", "pol is a list of policy statements")
	}
	if n.Exp, n.HasExp, err = intMember(p, "exp"); err != nil {
		return nil, err
	}
	if n.Nbf, n.HasNbf, err = intMember(p, "nbf"); err != nil {
		return nil, err
	}
	if mv, ok := p.Get("meta"); ok {
		if n.Meta, isObj = mv.(*canonical.Object); !isObj || n.Meta == nil {
			return nil, noteErr(CodeNoteShape, "payload.meta", "meta, when present, is an object")
		}
	}
	n.policy, n.policyErr = ParsePolicy(n.Pol)
	return n, nil
}

func onlyMembers(o *canonical.Object, prefix string, known []string) error {
	for _, m := range o.Members {
		found := false
		for _, k := range known {
			if m.Name == k {
				found = true
				break
			}
		}
		if !found {
			return noteErr(CodeNoteShape, prefix+m.Name, fmt.Sprintf("%s%s is not a member of a note; a note has no unknown members", prefix, m.Name))
		}
	}
	return nil
}

func stringMember(o *canonical.Object, prefix, name string, required bool) (string, error) {
	v, ok := o.Get(name)
	if !ok {
		if required {
			return "", noteErr(CodeNoteShape, prefix+name, prefix+name+" is missing")
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", noteErr(CodeNoteShape, prefix+name, prefix+name+" is a string")
	}
	return s, nil
}

func intMember(p *canonical.Object, name string) (int64, bool, error) {
	v, ok := p.Get(name)
	if !ok {
		return 0, false, nil
	}
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > maxSafeInt {
		return 0, false, noteErr(CodeNoteShape, "payload."+name, "payload."+name+", when present, is an integer number of Unix seconds within ±(2^53 − 1) (never null)")
	}
	return int64(f), true, nil
}

// Object returns the note as read (or as issued). It must not be changed.
func (n *Note) Object() *canonical.Object { return n.obj }

// Policy returns the parsed pol, or the *NoteError (note/policy) that says
// why it is malformed: a malformed policy grants nothing.
func (n *Note) Policy() (*Policy, error) { return n.policy, n.policyErr }

// SignedBytes is what iss signs: the UTF-8 of the canonical JSON of
// {"payload": …, "type": …}, the note without sig. The one definition of
// the signed bytes, for issuing and verifying alike.
func (n *Note) SignedBytes() ([]byte, error) {
	return signedBytes(n.obj)
}

func signedBytes(o *canonical.Object) ([]byte, error) {
	b, err := canonical.AppendObjectExcept(make([]byte, 0, 512), o, func(name string) bool { return name == "sig" })
	if err != nil {
		return nil, noteErr(CodeNoteShape, "", "the note has no canonical form: "+err.Error())
	}
	return b, nil
}

// CheckSignature reports whether sig is base64url (no padding) of a 64-byte
// P1363 signature that verifies under iss over [Note.SignedBytes]. r
// resolves iss; nil parses it afresh.
func (n *Note) CheckSignature(r *Resolver) error {
	var key *PublicKey
	var err error
	if r != nil {
		key, err = r.Resolve(n.Iss)
	} else {
		key, err = ParseDID(n.Iss)
	}
	if err != nil {
		return noteErr(CodeNoteIssuer, "payload.iss", "iss does not name a key to verify the note with: "+err.Error())
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(n.Sig)
	if err != nil || len(sig) != 64 {
		return noteErr(CodeNoteSignature, "sig", "sig is not base64url (no padding) of a 64-byte P-256 signature")
	}
	payload, err := n.SignedBytes()
	if err != nil {
		return err
	}
	if !key.Verify(payload, sig) {
		return noteErr(CodeNoteSignature, "sig", "the signature does not verify under iss over the canonical {payload, type}")
	}
	return nil
}

// CheckTime reports whether the note is in force at t: nbf ≤ t < exp, in
// Unix seconds. An absent nbf is the epoch and an absent exp no end. Only
// live checks ask (06 §1.2, §2.9); records are judged with no time at all
// (02 §9.3 step 2).
func (n *Note) CheckTime(t time.Time) error {
	sec := t.Unix() // floor: both bounds are whole seconds
	nbf := int64(0)
	if n.HasNbf {
		nbf = n.Nbf
	}
	if sec < nbf {
		return noteErr(CodeNoteTime, "payload.nbf", fmt.Sprintf("not in force before %s (nbf %d); checked at %s", time.Unix(nbf, 0).UTC().Format(time.RFC3339), nbf, t.UTC().Format(time.RFC3339)))
	}
	if n.HasExp && sec >= n.Exp {
		return noteErr(CodeNoteTime, "payload.exp", fmt.Sprintf("expired at %s (exp %d); checked at %s", time.Unix(n.Exp, 0).UTC().Format(time.RFC3339), n.Exp, t.UTC().Format(time.RFC3339)))
	}
	return nil
}

// Grants reports whether the note grants inv (01 §7.5–§8 in our profile;
// 02 §9.3 step 4): its cmd covers inv.Cmd by whole segments (note/command);
// its sub is its issuer, the whole account, or "space:" + inv.Space
// (note/subject: a note about another account, or another space, grants
// nothing); and its pol is well formed and holds for inv.Args()
// (note/policy). It does not check the signature, the time or the audience.
func (n *Note) Grants(inv *Invocation) error {
	if !Covers(n.Cmd, inv.Cmd) {
		return noteErr(CodeNoteCommand, "payload.cmd", fmt.Sprintf("cmd %q does not cover %q: a command covers itself and the commands below it", n.Cmd, inv.Cmd))
	}
	switch {
	case n.Sub == n.Iss:
	case inv.Space != "" && n.Sub == SpaceSubject(inv.Space):
	case len(n.Sub) > len(spacePrefix) && n.Sub[:len(spacePrefix)] == spacePrefix:
		return noteErr(CodeNoteSubject, "payload.sub", fmt.Sprintf("sub %q is another space than %q", n.Sub, inv.Space))
	default:
		return noteErr(CodeNoteSubject, "payload.sub", fmt.Sprintf("sub %q is neither the issuer (the whole account) nor space:<id>: a note about someone else grants nothing", n.Sub))
	}
	if n.policyErr != nil {
		return n.policyErr
	}
	// No statement holds for any args: they are made only for one.
	if n.policy.Len() > 0 && !n.policy.Holds(inv.Args()) {
		return noteErr(CodeNotePolicy, "payload.pol", fmt.Sprintf("the policy does not hold for %s in space %q, collection %q", inv.Cmd, inv.Space, inv.Collection))
	}
	return nil
}

const spacePrefix = "space:"

// SpaceSubject is the sub of a note about one space (06 §2.5).
func SpaceSubject(space string) string { return spacePrefix + space }
