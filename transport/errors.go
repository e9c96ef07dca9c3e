package transport

import (
	"errors"
	"fmt"
	"regexp"
)

// Error is why a connection ended or a handshake was refused: a stable
// reason code, a message naming the field and the rule, and whether the
// peer said so (in its bye) or this side decided. Every connection that
// ends carries one ([Conn.Err]); the peer is told the code and message in a
// bye frame when the link still works (docs/sync.md, "bye").
type Error struct {
	Code    string // one of the Code… constants, or a code the session layer chose
	Message string
	Remote  bool // the peer ended the connection with this reason
}

func (e *Error) Error() string {
	if e.Remote {
		return fmt.Sprintf("minca/transport: the peer ended the connection: %s: %s", e.Code, e.Message)
	}
	return "minca/transport: " + e.Code + ": " + e.Message
}

// ReasonCode is the stable reason code, for tools that print one.
func (e *Error) ReasonCode() string { return e.Code }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Code returns the reason code of the first *Error in err's chain, or ""
// when there is none.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Reason codes. They are a stable contract: peers see them in bye frames,
// and tools and tests match on them. docs/sync.md lists them with the rule
// each one names.
const (
	// A connection ended.
	CodeClosed  = "conn/closed"  // ended on purpose, with nothing wrong
	CodeIdle    = "conn/idle"    // no whole frame arrived within IdleTimeout
	CodeStalled = "conn/stalled" // a frame could not be sent within WriteTimeout: the peer does not read
	CodeBroken  = "conn/broken"  // the link failed (reset, or closed with no bye)

	// Frames (docs/sync.md, "Frames").
	CodeFrameTooLarge  = "frame/too-large"  // a frame longer than the receiver's limit
	CodeFrameMalformed = "frame/malformed"  // an empty frame, an unknown kind, a control frame that is not one of ours
	CodeFrameOrder     = "frame/unexpected" // a frame out of order: data before who, a second hello or who

	// The who exchange (06 §1.2; docs/sync.md, "who").
	CodeWhoShape     = "who/shape"           // hello or who malformed: a member missing, unknown or of the wrong type
	CodeWhoVersion   = "who/version"         // hello names a version of the exchange we do not speak
	CodeWhoNote      = "who/note"            // the note is malformed or its signature does not verify
	CodeWhoExpired   = "who/expired"         // the note's exp is past (06 §2.9: live checks are at now)
	CodeWhoNotYet    = "who/not-yet-valid"   // the note's nbf is still to come
	CodeWhoAudience  = "who/audience"        // the note is made out to another key than the one that signed the challenge
	CodeWhoRevoked   = "who/revoked"         // the key is revoked
	CodeWhoSignature = "who/signature"       // the challenge signature does not verify for this connection
	CodeWhoTimeout   = "who/timeout"         // hello and who not done within HandshakeTimeout
	CodeWhoPeer      = "who/unexpected-peer" // a key other than the one introduced or dialled

	// The relay (docs/sync.md, "Relay").
	CodeRelayShape   = "relay/shape"    // a relay message malformed
	CodeRelayRooms   = "relay/rooms"    // more rooms joined than MaxRooms
	CodeRelayFull    = "relay/full"     // the room has MaxMembers members
	CodeRelayRate    = "relay/rate"     // more bytes sent than the connection's rate allows: a flood
	CodeRelaySlow    = "relay/slow"     // more bytes queued for the member than QueueBytes: it does not read
	CodeRelayBusy    = "relay/busy"     // the room has MaxRoomQueue messages queued; this one is refused
	CodeRelayNoRoom  = "relay/no-room"  // a message for a room the sender has not joined
	CodeRelayNoPeer  = "relay/no-peer"  // a message to a member not in the room
	CodeRelayReplace = "relay/replaced" // the same key joined the room on another connection
)

// Codes lists every reason code this package produces.
func Codes() []string {
	return []string{
		CodeClosed, CodeIdle, CodeStalled, CodeBroken,
		CodeFrameTooLarge, CodeFrameMalformed, CodeFrameOrder,
		CodeWhoShape, CodeWhoVersion, CodeWhoNote, CodeWhoExpired, CodeWhoNotYet,
		CodeWhoAudience, CodeWhoRevoked, CodeWhoSignature, CodeWhoTimeout, CodeWhoPeer,
		CodeRelayShape, CodeRelayRooms, CodeRelayFull, CodeRelayRate, CodeRelaySlow,
		CodeRelayBusy, CodeRelayNoRoom, CodeRelayNoPeer, CodeRelayReplace,
	}
}

// codePattern is what a reason code on the wire looks like: a family and a
// name, lower case, at most 64 bytes.
var codePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*/[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidCode reports whether code may travel in a bye frame.
func ValidCode(code string) bool { return len(code) <= 64 && codePattern.MatchString(code) }
