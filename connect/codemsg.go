package connect

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect/internal/channel"
)

// The eight messages of connecting by code, in their order (06 §3). The
// first three travel in the clear; the rest are sealed.
const (
	MsgHello  = "code:hello"  // program: {commit}, to each peer that connects
	MsgKey    = "code:key"    // home: {key: O}, to the first peer that said hello
	MsgPoint  = "code:point"  // program: {key: J}, to the first peer whose key it took
	MsgHome   = "code:home"   // home, sealed: {origin}
	MsgAsk    = "code:ask"    // program, sealed: {did, proof, name?}
	MsgHeard  = "code:heard"  // home, sealed: {}
	MsgAnswer = "code:answer" // home, sealed: {grant} or {denied}
	MsgDone   = "code:done"   // program, sealed: {}
)

// Size limits of the channel's messages, in bytes of the whole network
// message {type, from, payload} (our profile; docs/connect.md). Beyond
// them a message is refused unread.
const (
	MaxClearMessage  = 512     // code:hello, code:key, code:point
	MaxSealedMessage = 4096    // code:home, code:ask, code:heard, code:done
	MaxAnswerMessage = 1 << 20 // code:answer, which carries the grant
	MaxDeniedLen     = 500     // characters of a reason for saying no
	MaxDIDLen        = 128     // characters of the did a program asks for
)

var msgTypes = []string{MsgHello, MsgKey, MsgPoint, MsgHome, MsgAsk, MsgHeard, MsgAnswer, MsgDone}

func sealedType(t string) bool { return t != MsgHello && t != MsgKey && t != MsgPoint }

func maxMessage(t string) int {
	switch {
	case t == MsgAnswer:
		return MaxAnswerMessage
	case sealedType(t):
		return MaxSealedMessage
	}
	return MaxClearMessage
}

// message is a network message of the channel, read: its type, and its
// payload — an object in the clear, the envelope's bytes when sealed.
type message struct {
	typ      string
	clear    *canonical.Object
	envelope []byte
}

// decodeMessage reads a network message {type, from, payload} (06 §3; 04's
// envelope): exactly those members; type one of the eight; from null
// (both sides join under a throwaway key and show no note); payload an
// object for the first three, a base64url string for the sealed ones;
// within the type's size. A refusal is a *Refusal, code/frame.
func decodeMessage(b []byte) (message, error) {
	bad := func(msg string) (message, error) {
		return message{}, refuse(CodeCodeFrame, "", msg+" (06 §3)")
	}
	if len(b) > MaxAnswerMessage {
		return bad("a message is at most " + strconv.Itoa(MaxAnswerMessage) + " bytes")
	}
	v, err := canonical.Parse(b)
	if err != nil {
		return bad("not JSON: " + err.Error())
	}
	o, ok := v.(*canonical.Object)
	if !ok || o.Len() != 3 || !o.Has("type") || !o.Has("from") || !o.Has("payload") {
		return bad("a network message is {type, from, payload} and nothing else")
	}
	tv, _ := o.Get("type")
	t, _ := tv.(string)
	if !slices.Contains(msgTypes, t) {
		return bad("type is not one of the eight messages of connecting by code")
	}
	if len(b) > maxMessage(t) {
		return bad(t + " is at most " + strconv.Itoa(maxMessage(t)) + " bytes")
	}
	if from, _ := o.Get("from"); from != nil {
		return bad("from is null: neither side shows a note")
	}
	pv, _ := o.Get("payload")
	m := message{typ: t}
	if !sealedType(t) {
		if m.clear, ok = pv.(*canonical.Object); !ok {
			return bad(t + "'s payload is an object")
		}
		return m, nil
	}
	s, ok := pv.(string)
	if !ok {
		return bad(t + "'s payload is the base64url of its sealed envelope")
	}
	if m.envelope, err = base64.RawURLEncoding.Strict().DecodeString(s); err != nil {
		return bad(t + "'s payload is the base64url (no padding) of its sealed envelope")
	}
	return m, nil
}

// encodeClear writes a message in the clear.
func encodeClear(t string, payload *canonical.Object) []byte {
	b, _ := canonical.Marshal(canonical.NewObject("type", t, "from", nil, "payload", payload))
	return b
}

// sealedFrame is the bytes of a sealed message but its type and payload.
const sealedFrame = len(`{"from":null,"payload":"","type":""}`)

// encodeSealed writes a sealed message: body sealed in s as t. A message
// past its limit is refused before it is sealed, so the count of the
// session's messages stays whole.
func encodeSealed(s *channel.Session, t string, body *canonical.Object) ([]byte, error) {
	plain, err := canonical.Marshal(body)
	if err != nil {
		return nil, err
	}
	if n := sealedFrame + len(t) + base64.RawURLEncoding.EncodedLen(len(plain)+channel.Overhead); n > maxMessage(t) {
		return nil, refuse(CodeCodeFrame, "", t+" would be "+strconv.Itoa(n)+" bytes, past its limit of "+strconv.Itoa(maxMessage(t))+" (06 §3)")
	}
	env, err := s.Seal(t, plain)
	if err != nil {
		return nil, err
	}
	return canonical.Marshal(canonical.NewObject("type", t, "from", nil, "payload", base64.RawURLEncoding.EncodeToString(env)))
}

// openBody opens a sealed message in s and reads its body as a JSON
// object. A payload that does not open is code/seal; a body that is not an
// object, code/payload.
func openBody(s *channel.Session, m message) (*canonical.Object, error) {
	plain, err := s.Open(m.typ, m.envelope)
	if err != nil {
		return nil, refuse(CodeCodeSeal, "payload", m.typ+": "+err.Error()+" (06 §3)")
	}
	v, err := canonical.Parse(plain)
	o, ok := v.(*canonical.Object)
	if err != nil || !ok {
		return nil, refuse(CodeCodePayload, "payload", m.typ+"'s body is a JSON object (06 §3)")
	}
	return o, nil
}

// payloadStrings checks that o has the required members and no others but
// the optional ones, all strings, and returns the required ones' values in
// order.
func payloadStrings(t string, o *canonical.Object, required []string, optional ...string) ([]string, error) {
	for _, m := range o.Members {
		if !slices.Contains(required, m.Name) && !slices.Contains(optional, m.Name) {
			return nil, refuse(CodeCodePayload, "payload."+m.Name, t+" has no member "+strconv.Quote(m.Name)+" (06 §3)")
		}
		if _, ok := m.Value.(string); !ok {
			return nil, refuse(CodeCodePayload, "payload."+m.Name, t+"'s "+m.Name+" is a string (06 §3)")
		}
	}
	out := make([]string, len(required))
	for i, name := range required {
		v, ok := o.Get(name)
		if !ok {
			return nil, refuse(CodeCodePayload, "payload."+name, t+" has "+name+" (06 §3)")
		}
		out[i] = v.(string)
	}
	return out, nil
}

// readBytes reads {name: base64url of n bytes}: a point ({key}, checked on
// P-256) or a commitment ({commit}).
func readBytes(t string, o *canonical.Object, name string, n int) ([]byte, error) {
	s, err := payloadStrings(t, o, []string{name})
	if err != nil {
		return nil, err
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s[0])
	if err != nil || len(b) != n {
		return nil, refuse(CodeCodePayload, "payload."+name, t+"'s "+name+" is base64url of "+strconv.Itoa(n)+" bytes (06 §3)")
	}
	if name == "key" {
		if err := channel.CheckPoint(b); err != nil {
			return nil, refuse(CodeCodePayload, "payload.key", t+"'s key is not a P-256 point: "+err.Error()+" (06 §3)")
		}
	}
	return b, nil
}

// Ask is what a program said when it asked (06 §3, code:ask): the key it
// holds, its proof of it naming the home's origin, and its name, which the
// home shows as a name only.
type Ask struct {
	DID   string
	Proof string
	Name  string
	// Check is the exchange's six digits, which the home shows the person
	// beside the name, for the person to give the program.
	Check string
}

// readAsk reads code:ask's body: {did, proof, name?}, did starting
// did:key: (at most 128 characters), name at most 80 characters, proof at
// most 200.
func readAsk(o *canonical.Object) (Ask, error) {
	s, err := payloadStrings(MsgAsk, o, []string{"did", "proof"}, "name")
	if err != nil {
		return Ask{}, err
	}
	a := Ask{DID: s[0], Proof: s[1]}
	if n, ok := o.Get("name"); ok {
		a.Name = n.(string)
	}
	switch {
	case !strings.HasPrefix(a.DID, didKeyPrefix) || len(a.DID) > MaxDIDLen:
		return Ask{}, refuse(CodeCodePayload, "payload.did", "code:ask's did starts did:key: (06 §3)")
	case canonical.UTF16Len(a.Name) > MaxNameLen:
		return Ask{}, refuse(CodeCodePayload, "payload.name", "code:ask's name is at most 80 characters (06 §3)")
	case canonical.UTF16Len(a.Proof) > MaxProofLen:
		return Ask{}, refuse(CodeCodePayload, "payload.proof", "code:ask's proof is at most 200 characters (06 §3)")
	}
	return a, nil
}

// readAnswer reads code:answer's body: {grant} or {denied}.
func readAnswer(o *canonical.Object) (*Grant, string, error) {
	if o.Len() != 1 {
		return nil, "", refuse(CodeCodePayload, "payload", `code:answer is {"grant"} or {"denied"} (06 §3)`)
	}
	if d, ok := o.Get("denied"); ok {
		s, isStr := d.(string)
		if !isStr || canonical.UTF16Len(s) > MaxDeniedLen {
			return nil, "", refuse(CodeCodePayload, "payload.denied", "code:answer's denied is a reason of at most 500 characters (06 §3)")
		}
		return nil, s, nil
	}
	gv, ok := o.Get("grant")
	if !ok {
		return nil, "", refuse(CodeCodePayload, "payload", `code:answer is {"grant"} or {"denied"} (06 §3)`)
	}
	g, err := DecodeGrant(gv)
	if err != nil {
		return nil, "", err
	}
	return g, "", nil
}
