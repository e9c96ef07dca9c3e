package connect

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/minca-go/minca/canonical"
)

// CodeSecretLen is the length of a connect code's secret (06 §3).
const CodeSecretLen = 16

// CodePrefix starts every connect code's text (06 §3).
const CodePrefix = "mc_"

// codeTextLen is the length of the secret's base64url text.
const codeTextLen = 22

// roomLabel is what the room's content id hashes before the secret (06 §3:
// room = CID(UTF-8("minca/code-room/v1") ‖ secret)).
const roomLabel = "minca/code-room/v1"

// Code is the one-time secret of connecting by code (06 §3): 16 bytes a
// program makes with a CSPRNG each time it connects. Its text is "mc_" and
// the secret in base64url (22 characters). It names the relay room both
// sides meet in and goes into the channel's keys; whoever holds it may take
// either side's one exchange, which costs a retry, never the account.
type Code [CodeSecretLen]byte

// NewCode makes a code from crypto/rand (06 §3: "MUST make the secret with
// a CSPRNG each time it connects").
func NewCode() (Code, error) {
	var c Code
	if _, err := rand.Read(c[:]); err != nil {
		return Code{}, fmt.Errorf("minca/connect: making a code: %w", err)
	}
	return c, nil
}

// String is the code's text: "mc_" + base64url (no padding) of the secret.
func (c Code) String() string {
	return CodePrefix + base64.RawURLEncoding.EncodeToString(c[:])
}

// Room is the relay room of the code's channel (06 §3): the content id
// (02 §2) of UTF-8("minca/code-room/v1") ‖ secret.
func (c Code) Room() string {
	b := make([]byte, 0, len(roomLabel)+CodeSecretLen)
	b = append(append(b, roomLabel...), c[:]...)
	return canonical.IDOf(b).String()
}

// Link is the home's connect page with the code as the fragment, so the
// code never reaches a server (06 §3): page#mc_….
func (c Code) Link(page string) string { return page + "#" + c.String() }

// CodeIn reads the code in text — a link, an address bar, a pasted line —
// by 06 §3's rule: the first match of mc_([A-Za-z0-9_-]{22}) not followed
// by another base64url character. The 22 characters decode to 16 bytes
// with the last character's four low bits ignored, as a base64url decoder
// that does not check padding bits reads them. No match is a *Refusal
// (code/none).
func CodeIn(text string) (Code, error) {
	for i := 0; i+len(CodePrefix)+codeTextLen <= len(text); i++ {
		if text[i:i+len(CodePrefix)] != CodePrefix {
			continue
		}
		s := i + len(CodePrefix)
		e := s + codeTextLen
		if !allBase64URL(text[s:e]) || e < len(text) && isBase64URL(text[e]) {
			continue
		}
		return decodeSecret(text[s:e]), nil
	}
	return Code{}, refuse(CodeCodeNone, "", "no connect code: nothing matches mc_ and 22 base64url characters not followed by another (06 §3)")
}

// decodeSecret decodes 22 base64url characters into 16 bytes, dropping the
// last character's four low bits.
func decodeSecret(s string) Code {
	var c Code
	var acc uint32
	bits, n := 0, 0
	for i := 0; i < len(s); i++ {
		acc = acc<<6 | uint32(base64URLValue(s[i]))
		bits += 6
		if bits >= 8 {
			bits -= 8
			if n < CodeSecretLen {
				c[n] = byte(acc >> bits)
				n++
			}
		}
	}
	return c
}

func isBase64URL(b byte) bool {
	return b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '_'
}

func allBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isBase64URL(s[i]) {
			return false
		}
	}
	return true
}

func base64URLValue(b byte) byte {
	switch {
	case b >= 'A' && b <= 'Z':
		return b - 'A'
	case b >= 'a' && b <= 'z':
		return b - 'a' + 26
	case b >= '0' && b <= '9':
		return b - '0' + 52
	case b == '-':
		return 62
	}
	return 63
}
