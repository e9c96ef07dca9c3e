package identity

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/minca-go/minca/canonical"
)

// NoteOptions are what a new note says. The issuer is the signer.
type NoteOptions struct {
	// Aud is the did:key the note is made out to. Required.
	Aud string
	// Sub is what the note is about: the issuer's DID (the whole account)
	// or "space:<id>". Default: the issuer's DID.
	Sub string
	// Cmd is the command granted. Required.
	Cmd string
	// Pol is the policy, a list of statements. Default: [] (no condition).
	Pol []any
	// Exp is when the note ends, in Unix seconds; 0 means no exp.
	Exp int64
	// Nbf is when the note starts, in Unix seconds; 0 means no nbf.
	Nbf int64
	// Nonce makes the note unique. Default: 12 random bytes, base64url.
	Nonce string
	// Meta is signed data that grants nothing; nil means no meta.
	Meta *canonical.Object
}

// IssueNote signs a note from s's key (01 §7 in our profile; 06 §2.5 step
// 5). It refuses what peers would refuse or find granting nothing: an aud
// that is not a P-256 did:key, a cmd that is not a command, a malformed
// policy, exp not after nbf.
func IssueNote(s Signer, opts NoteOptions) (*Note, error) {
	if _, err := ParseDID(opts.Aud); err != nil {
		return nil, fmt.Errorf("minca/identity: issuing a note: aud: %w", err)
	}
	if err := CheckCommand(opts.Cmd); err != nil {
		return nil, fmt.Errorf("minca/identity: issuing a note: cmd %q: %w", opts.Cmd, err)
	}
	sub := opts.Sub
	if sub == "" {
		sub = s.DID()
	}
	pol := opts.Pol
	if pol == nil {
		pol = []any{}
	}
	if _, err := ParsePolicy(pol); err != nil {
		return nil, fmt.Errorf("minca/identity: issuing a note: %w", err)
	}
	if opts.Exp != 0 && opts.Nbf != 0 && opts.Exp <= opts.Nbf {
		return nil, fmt.Errorf("minca/identity: issuing a note: exp %d is not after nbf %d", opts.Exp, opts.Nbf)
	}
	nonce := opts.Nonce
	if nonce == "" {
		var b [12]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("minca/identity: issuing a note: nonce: %w", err)
		}
		nonce = base64.RawURLEncoding.EncodeToString(b[:])
	}
	payload := canonical.NewObject("iss", s.DID(), "aud", opts.Aud, "sub", sub, "cmd", opts.Cmd, "pol", pol)
	if opts.Exp != 0 {
		payload.Set("exp", float64(opts.Exp))
	}
	if opts.Nbf != 0 {
		payload.Set("nbf", float64(opts.Nbf))
	}
	payload.Set("nonce", nonce)
	if opts.Meta != nil {
		payload.Set("meta", opts.Meta)
	}
	o := canonical.NewObject("type", NoteType, "payload", payload)
	msg, err := signedBytes(o)
	if err != nil {
		return nil, fmt.Errorf("minca/identity: issuing a note: %w", err)
	}
	sig, err := s.Sign(msg)
	if err != nil {
		return nil, fmt.Errorf("minca/identity: issuing a note: %w", err)
	}
	o.Set("sig", base64.RawURLEncoding.EncodeToString(sig))
	n, err := DecodeNote(o)
	if err != nil {
		return nil, fmt.Errorf("minca/identity: issuing a note: it would be refused: %w", err)
	}
	return n, nil
}
