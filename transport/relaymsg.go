package transport

import (
	"bytes"
	"encoding/json"
	"regexp"
)

// PathRelay is where a relay accepts members' WebSocket connections.
const PathRelay = "/minca/relay"

// Relay message types (docs/sync.md, "Relay"). Each travels as one data
// frame of a relay connection, a JSON object.
const (
	relayJoin    = "join"    // member → relay: {room, intro}
	relayLeave   = "leave"   // member → relay: {room}
	relaySignal  = "signal"  // both ways: {room, to | from, payload}
	relayForward = "forward" // both ways: {room, to? | from, payload}
	relayJoined  = "joined"  // relay → member: {room}
	relayIntro   = "intro"   // relay → member: {room, peer}
	relayLeft    = "left"    // relay → member: {room, peer}
	relayError   = "error"   // relay → member: {room?, code, message}
)

// maxRoomLen bounds a room id.
const maxRoomLen = 128

// roomPattern is what a room id looks like: a content id such as 06 §3's
// code rooms, or any other name of base64url characters.
var roomPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// ValidRoom reports whether room may name a relay room: 1 to 128
// characters of A–Z, a–z, 0–9, _ and -.
func ValidRoom(room string) bool { return roomPattern.MatchString(room) }

// relayMsg is a relay message; only the members of its type are set.
type relayMsg struct {
	Type    string          `json:"type"`
	Room    string          `json:"room,omitempty"`
	Intro   *bool           `json:"intro,omitempty"`
	To      string          `json:"to,omitempty"`
	From    string          `json:"from,omitempty"`
	Peer    string          `json:"peer,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Code    string          `json:"code,omitempty"`
	Message string          `json:"message,omitempty"`
}

// encode writes m. A payload keeps its characters (no HTML escaping);
// only whitespace between its tokens may go.
func (m *relayMsg) encode() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		panic("minca/transport: encoding a relay message: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// relayMembers are the members each type may have, and must.
var relayMembers = map[string]struct{ allowed, required []string }{
	relayJoin:    {[]string{"type", "room", "intro"}, []string{"room", "intro"}},
	relayLeave:   {[]string{"type", "room"}, []string{"room"}},
	relaySignal:  {[]string{"type", "room", "to", "from", "payload"}, []string{"room", "payload"}},
	relayForward: {[]string{"type", "room", "to", "from", "payload"}, []string{"room", "payload"}},
	relayJoined:  {[]string{"type", "room"}, []string{"room"}},
	relayIntro:   {[]string{"type", "room", "peer"}, []string{"room", "peer"}},
	relayLeft:    {[]string{"type", "room", "peer"}, []string{"room", "peer"}},
	relayError:   {[]string{"type", "room", "code", "message"}, []string{"code", "message"}},
}

// decodeRelay reads a relay message, refusing any that is not exactly one
// of ours (relay/shape): members of the wrong type or unknown, a room that
// is not a room id, a payload that is not a JSON object or string.
func decodeRelay(b []byte) (*relayMsg, error) {
	bad := func(format string, args ...any) (*relayMsg, error) {
		return nil, errorf(CodeRelayShape, format, args...)
	}
	var head struct {
		Type *string `json:"type"`
	}
	if json.Unmarshal(b, &head) != nil || head.Type == nil {
		return bad("a relay message is a JSON object with a string member type")
	}
	spec, ok := relayMembers[*head.Type]
	if !ok {
		return bad("relay message type %q is not one of join, leave, signal, forward, joined, intro, left, error", truncate(*head.Type, 32))
	}
	raw, err := members(b, *head.Type, spec.allowed, spec.required)
	if err != nil {
		return bad("%s", err.(*Error).Message)
	}
	m := &relayMsg{Type: *head.Type}
	for name, v := range raw {
		var err error
		switch name {
		case "type":
		case "room":
			if m.Room, err = stringOf(v, name); err == nil && !ValidRoom(m.Room) {
				return bad("room is 1 to %d characters of A-Z, a-z, 0-9, _ and -", maxRoomLen)
			}
		case "intro":
			var b bool
			if bytes.Equal(v, []byte("null")) || json.Unmarshal(v, &b) != nil {
				return bad("intro is true or false")
			}
			m.Intro = &b
		case "to":
			m.To, err = stringOf(v, name)
		case "from":
			m.From, err = stringOf(v, name)
		case "peer":
			m.Peer, err = stringOf(v, name)
		case "code":
			if m.Code, err = stringOf(v, name); err == nil && !ValidCode(m.Code) {
				return bad("code is a reason code")
			}
		case "message":
			if m.Message, err = stringOf(v, name); err == nil && len(m.Message) > maxByeMessage {
				return bad("message is at most %d bytes", maxByeMessage)
			}
		case "payload":
			if len(v) == 0 || (v[0] != '{' && v[0] != '"') {
				return bad("payload is a JSON object or string")
			}
			m.Payload = v
		}
		if err != nil {
			return bad("%s is a string", name)
		}
	}
	return m, nil
}
