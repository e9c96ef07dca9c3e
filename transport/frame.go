package transport

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"
)

// A frame is one kind byte and a body (docs/sync.md, "Frames"). Control
// frames carry this package's own messages as JSON; data frames carry the
// session layer's messages, which this package never reads.
const (
	kindControl byte = 0x00
	kindData    byte = 0x01
)

// Control message types.
const (
	typeHello = "hello"
	typeWho   = "who"
	typeBye   = "bye"
	typePing  = "ping"
)

// whoVersion is the version of the exchange hello names.
const whoVersion = 1

// nonceLen is the length of a hello nonce, in bytes.
const nonceLen = 32

// maxByeMessage bounds a bye's message, in bytes.
const maxByeMessage = 256

// control is a decoded control frame. Only the members of its type are set.
type control struct {
	Type string

	// hello
	V        int
	Nonce    []byte
	MaxFrame int

	// who
	From json.RawMessage // "null" or a note
	Key  string
	Sig  []byte

	// bye
	Code    string
	Message string
}

var b64 = base64.RawURLEncoding.Strict()

// encodeControl writes a control frame. Encoding our own values cannot
// fail.
func encodeControl(c *control) []byte {
	var m map[string]any
	switch c.Type {
	case typeHello:
		m = map[string]any{"type": c.Type, "payload": map[string]any{
			"v": c.V, "nonce": b64.EncodeToString(c.Nonce), "maxFrame": c.MaxFrame}}
	case typeWho:
		from := c.From
		if from == nil {
			from = json.RawMessage("null")
		}
		m = map[string]any{"type": c.Type, "from": from, "payload": map[string]any{
			"key": c.Key, "sig": b64.EncodeToString(c.Sig)}}
	case typeBye:
		m = map[string]any{"type": c.Type, "payload": map[string]any{"code": c.Code, "message": c.Message}}
	default:
		m = map[string]any{"type": c.Type}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic("minca/transport: encoding a control frame: " + err.Error())
	}
	return append([]byte{kindControl}, b...)
}

// members decodes a JSON object into its members, refusing any not in
// allowed and any of required that is missing. Names match exactly.
func members(raw []byte, where string, allowed, required []string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errorf(CodeWhoShape, "%s is not a JSON object", where)
	}
	for name := range m {
		ok := false
		for _, a := range allowed {
			if name == a {
				ok = true
				break
			}
		}
		if !ok {
			return nil, errorf(CodeWhoShape, "%s.%s is not a member of %s", where, name, where)
		}
	}
	for _, r := range required {
		if _, ok := m[r]; !ok {
			return nil, errorf(CodeWhoShape, "%s.%s is missing", where, r)
		}
	}
	return m, nil
}

func stringOf(raw json.RawMessage, field string) (string, error) {
	var s string
	if bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, &s) != nil {
		return "", errorf(CodeWhoShape, "%s is a string", field)
	}
	return s, nil
}

func intOf(raw json.RawMessage, field string, lo, hi int) (int, error) {
	var n int
	if bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, &n) != nil || n < lo || n > hi {
		return 0, errorf(CodeWhoShape, "%s is an integer in [%d, %d]", field, lo, hi)
	}
	return n, nil
}

func bytesOf(raw json.RawMessage, field string, n int) ([]byte, error) {
	s, err := stringOf(raw, field)
	if err != nil {
		return nil, err
	}
	b, err := b64.DecodeString(s)
	if err != nil || len(b) != n {
		return nil, errorf(CodeWhoShape, "%s is base64url (no padding) of %d bytes", field, n)
	}
	return b, nil
}

// decodeControl reads a control frame (its kind byte already checked).
// Every failure is an *Error: frame/malformed for a frame that is not a
// control message at all, who/shape for a hello or who with a bad member.
func decodeControl(body []byte) (*control, error) {
	if !utf8.Valid(body) {
		return nil, errorf(CodeFrameMalformed, "a control frame is UTF-8 JSON")
	}
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.Type == nil {
		return nil, errorf(CodeFrameMalformed, "a control frame is a JSON object with a string member type")
	}
	c := &control{Type: *head.Type}
	switch c.Type {
	case typeHello:
		m, err := members(body, "hello", []string{"type", "payload"}, []string{"payload"})
		if err != nil {
			return nil, err
		}
		p, err := members(m["payload"], "hello.payload", []string{"v", "nonce", "maxFrame"}, []string{"v", "nonce", "maxFrame"})
		if err != nil {
			return nil, err
		}
		if c.V, err = intOf(p["v"], "hello.payload.v", 0, 1<<30); err != nil {
			return nil, err
		}
		if c.Nonce, err = bytesOf(p["nonce"], "hello.payload.nonce", nonceLen); err != nil {
			return nil, err
		}
		if c.MaxFrame, err = intOf(p["maxFrame"], "hello.payload.maxFrame", MinFrame, MaxFrameCap); err != nil {
			return nil, err
		}
	case typeWho:
		m, err := members(body, "who", []string{"type", "from", "payload"}, []string{"from", "payload"})
		if err != nil {
			return nil, err
		}
		c.From = m["from"]
		p, err := members(m["payload"], "who.payload", []string{"key", "sig"}, []string{"key", "sig"})
		if err != nil {
			return nil, err
		}
		if c.Key, err = stringOf(p["key"], "who.payload.key"); err != nil {
			return nil, err
		}
		if c.Sig, err = bytesOf(p["sig"], "who.payload.sig", 64); err != nil {
			return nil, err
		}
	case typeBye:
		m, err := members(body, "bye", []string{"type", "payload"}, []string{"payload"})
		if err != nil {
			return nil, malformed(err)
		}
		p, err := members(m["payload"], "bye.payload", []string{"code", "message"}, []string{"code", "message"})
		if err != nil {
			return nil, malformed(err)
		}
		if c.Code, err = stringOf(p["code"], "bye.payload.code"); err != nil || !ValidCode(c.Code) {
			return nil, errorf(CodeFrameMalformed, "bye.payload.code is a reason code: family/name, lower case, at most 64 bytes")
		}
		if c.Message, err = stringOf(p["message"], "bye.payload.message"); err != nil || len(c.Message) > maxByeMessage {
			return nil, errorf(CodeFrameMalformed, "bye.payload.message is a string of at most %d bytes", maxByeMessage)
		}
	case typePing:
		if _, err := members(body, "ping", []string{"type"}, nil); err != nil {
			return nil, malformed(err)
		}
	default:
		return nil, errorf(CodeFrameMalformed, "control type %q is not one of hello, who, bye, ping", truncate(c.Type, 32))
	}
	return c, nil
}

// malformed turns a shape error outside the who exchange into
// frame/malformed.
func malformed(err error) error {
	if e, ok := err.(*Error); ok {
		return &Error{Code: CodeFrameMalformed, Message: e.Message}
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// checkKind reports what kind of frame f is, refusing an empty frame or
// an unknown kind.
func checkKind(f []byte) (byte, error) {
	if len(f) == 0 {
		return 0, errorf(CodeFrameMalformed, "an empty frame: every frame has a kind byte")
	}
	switch f[0] {
	case kindControl, kindData:
		return f[0], nil
	}
	return 0, errorf(CodeFrameMalformed, "frame kind 0x%02x is neither control (0x00) nor data (0x01)", f[0])
}
