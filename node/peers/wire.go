package peers

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"
	"unicode/utf8"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/transport"
)

// Message types of the sync session (docs/sync.md §7). Each data frame
// holds one message: its type byte, the session id as a uvarint, and a
// body.
const (
	msgNegOpen  byte = 0x01 // opener → responder: the scope, and negentropy's first message
	msgNegMsg   byte = 0x02 // negentropy's messages, both ways
	msgNegClose byte = 0x03 // opener → responder: reconciliation is over
	msgNegErr   byte = 0x04 // either way: the session ends, with a reason
	msgWant     byte = 0x05 // ask for versions by digest
	msgVersions byte = 0x06 // versions, as the sender keeps them
	msgAdmitted byte = 0x07 // answer to a pushed VERSIONS: what the judge made of it
)

var msgNames = map[byte]string{
	msgNegOpen: "NEG-OPEN", msgNegMsg: "NEG-MSG", msgNegClose: "NEG-CLOSE", msgNegErr: "NEG-ERR",
	msgWant: "WANT", msgVersions: "VERSIONS", msgAdmitted: "ADMITTED",
	msgFileWant: "FILE-WANT", msgFileData: "FILE-DATA", msgFileCredit: "FILE-CREDIT", msgFileStop: "FILE-STOP",
}

// WANT flags.
const (
	wantKept   byte = 0 // versions as the sender keeps them (stubs as stubs)
	wantBodies byte = 1 // whole versions only: bodies of stubs the asker holds
)

// VERSIONS flags.
const (
	versAnswer byte = 0 // part of the answer to the oldest WANT not yet answered
	versLast   byte = 1 // the last part of that answer
	versPush   byte = 2 // unasked: the receiver answers with ADMITTED
)

// Limits of the session protocol (docs/sync.md §7.3).
const (
	// MaxWantIDs is the most digests one WANT carries.
	MaxWantIDs = 1024
	// MaxWantsOut is how many WANTs a side may have unanswered.
	MaxWantsOut = 2
	// MaxPushesOut is how many pushed VERSIONS a side may have unacknowledged.
	MaxPushesOut = 2
	// MaxBatch is the most versions one VERSIONS carries.
	MaxBatch = 1024
	// MaxCollections is the most collections a NEG-OPEN names.
	MaxCollections = 64
	// maxOpenJSON bounds NEG-OPEN's parameters.
	maxOpenJSON = 16 << 10
	// maxSID is the largest session id.
	maxSID = 1<<32 - 1
)

// message is one decoded data frame.
type message struct {
	typ  byte
	sid  uint64
	body []byte
	size int // bytes of the connection's RecvQueue it holds until handled
	// frame is the buffer body lies in; FILE-DATA's bytes are written
	// from it and it is released then (files_fetch.go), VERSIONS' once
	// they are decoded (receive.go). Other messages' decoded parts may
	// keep pointing into it: the collector frees it.
	frame transport.Frame

	// NEG-OPEN
	open *openParams
	// NEG-ERR
	code, text string
	// WANT
	flag byte
	ids  []canonical.ID
	// VERSIONS: each version's JSON, as sent
	versions [][]byte
	// ADMITTED
	counts admitted
	// FILE-WANT, FILE-DATA, FILE-CREDIT, FILE-STOP (wire_files.go)
	file *fileMsg
}

// openParams are NEG-OPEN's JSON parameters.
type openParams struct {
	Space       string   `json:"space"`
	Collections []string `json:"collections,omitempty"`
	Live        bool     `json:"live"`
}

// admitted is what ADMITTED reports of one push.
type admitted struct {
	Stored, Later, Refused, Held uint64
}

// wireError is a peer's message that breaks the session protocol: the
// connection ends with its code.
type wireError struct {
	code, msg string
}

func (e *wireError) Error() string { return e.code + ": " + e.msg }

func malformedf(format string, args ...any) error {
	return &wireError{CodeMalformed, fmt.Sprintf(format, args...)}
}

var collName = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// decode reads one message; every failure names the field and the rule.
func decode(b []byte) (*message, error) {
	if len(b) == 0 {
		return nil, malformedf("an empty message")
	}
	m := &message{typ: b[0]}
	if _, ok := msgNames[m.typ]; !ok {
		return nil, malformedf("message type 0x%02x is not one of ours", m.typ)
	}
	sid, n := binary.Uvarint(b[1:])
	if n <= 0 || sid > maxSID {
		return nil, malformedf("%s: the session id is not a uvarint of at most 2^32-1", msgNames[m.typ])
	}
	m.sid, m.body = sid, b[1+n:]
	switch m.typ {
	case msgNegOpen:
		l, n := binary.Uvarint(m.body)
		if n <= 0 || l == 0 || l > maxOpenJSON || uint64(len(m.body)-n) < l {
			return nil, malformedf("NEG-OPEN: the parameters' length is not a uvarint of 1 to %d within the message", maxOpenJSON)
		}
		p, err := decodeOpen(m.body[n : n+int(l)])
		if err != nil {
			return nil, err
		}
		m.open, m.body = p, m.body[n+int(l):]
		if len(m.body) == 0 {
			return nil, malformedf("NEG-OPEN: no negentropy message after the parameters")
		}
	case msgNegMsg:
		if len(m.body) == 0 {
			return nil, malformedf("NEG-MSG: an empty negentropy message")
		}
	case msgNegClose:
		if len(m.body) != 0 {
			return nil, malformedf("NEG-CLOSE: has a body")
		}
	case msgNegErr:
		var e struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if err := strictJSON(m.body, &e, "NEG-ERR"); err != nil {
			return nil, err
		}
		if !validCode(e.Code) || len(e.Message) > 256 || !utf8.ValidString(e.Message) {
			return nil, malformedf("NEG-ERR: code is a reason code (family/name) and message at most 256 bytes of UTF-8")
		}
		m.code, m.text = e.Code, e.Message
	case msgWant:
		if len(m.body) < 1 || (m.body[0] != wantKept && m.body[0] != wantBodies) {
			return nil, malformedf("WANT: the flag is 0 (as kept) or 1 (bodies)")
		}
		m.flag = m.body[0]
		ids := m.body[1:]
		if len(ids) == 0 || len(ids)%32 != 0 || len(ids)/32 > MaxWantIDs {
			return nil, malformedf("WANT: 1 to %d digests of 32 bytes", MaxWantIDs)
		}
		m.ids = make([]canonical.ID, len(ids)/32)
		for i := range m.ids {
			copy(m.ids[i][:], ids[i*32:])
		}
	case msgVersions:
		if len(m.body) < 1 || m.body[0] > versPush {
			return nil, malformedf("VERSIONS: the flag is 0 (answer), 1 (last answer) or 2 (push)")
		}
		m.flag = m.body[0]
		rest := m.body[1:]
		for len(rest) > 0 {
			l, n := binary.Uvarint(rest)
			if n <= 0 || l == 0 || uint64(len(rest)-n) < l {
				return nil, malformedf("VERSIONS: entry %d's length is not a uvarint within the message", len(m.versions))
			}
			if len(m.versions) == MaxBatch {
				return nil, malformedf("VERSIONS: more than %d versions", MaxBatch)
			}
			m.versions = append(m.versions, rest[n:n+int(l)])
			rest = rest[n+int(l):]
		}
		if len(m.versions) == 0 && m.flag != versLast {
			return nil, malformedf("VERSIONS: no versions (only a last answer may be empty)")
		}
	case msgAdmitted:
		rest := m.body
		for i, p := range []*uint64{&m.counts.Stored, &m.counts.Later, &m.counts.Refused, &m.counts.Held} {
			v, n := binary.Uvarint(rest)
			if n <= 0 || v > MaxBatch {
				return nil, malformedf("ADMITTED: count %d is not a uvarint of at most %d", i, MaxBatch)
			}
			*p, rest = v, rest[n:]
		}
		if len(rest) != 0 {
			return nil, malformedf("ADMITTED: bytes after the four counts")
		}
	case msgFileWant, msgFileData, msgFileCredit, msgFileStop:
		if err := decodeFile(m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func decodeOpen(b []byte) (*openParams, error) {
	p := &openParams{}
	if err := strictJSON(b, p, "NEG-OPEN"); err != nil {
		return nil, err
	}
	if p.Space == "" || len(p.Space) > 128 {
		return nil, malformedf("NEG-OPEN: space is 1 to 128 characters")
	}
	if len(p.Collections) > MaxCollections {
		return nil, malformedf("NEG-OPEN: collections names at most %d", MaxCollections)
	}
	for i, c := range p.Collections {
		if !collName.MatchString(c) {
			return nil, malformedf("NEG-OPEN: collections[%d] is 1 to 128 of A-Z a-z 0-9 . _ : -", i)
		}
	}
	return p, nil
}

// strictJSON decodes one JSON object with no unknown or repeated members.
func strictJSON(b []byte, v any, where string) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return malformedf("%s: the JSON: %v", where, err)
	}
	if d.More() {
		return malformedf("%s: bytes after the JSON object", where)
	}
	return nil
}

var codePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*/[a-z0-9]+(-[a-z0-9]+)*$`)

func validCode(c string) bool { return len(c) <= 64 && codePattern.MatchString(c) }

// Encoders. Each returns a whole message.

func header(typ byte, sid uint64, extra int) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+extra)
	b = append(b, typ)
	return binary.AppendUvarint(b, sid)
}

func encodeNegOpen(sid uint64, p *openParams, neg []byte) []byte {
	j, _ := json.Marshal(p)
	b := header(msgNegOpen, sid, len(j)+len(neg)+4)
	b = binary.AppendUvarint(b, uint64(len(j)))
	b = append(b, j...)
	return append(b, neg...)
}

func encodeNegMsg(sid uint64, neg []byte) []byte {
	return append(header(msgNegMsg, sid, len(neg)), neg...)
}

func encodeNegClose(sid uint64) []byte { return header(msgNegClose, sid, 0) }

func encodeNegErr(sid uint64, code, text string) []byte {
	j := reasonJSON(code, text)
	return append(header(msgNegErr, sid, len(j)), j...)
}

// reasonJSON is the {"code","message"} that NEG-ERR and FILE-STOP carry,
// the message cut to 256 bytes on a character boundary.
func reasonJSON(code, text string) []byte {
	if len(text) > 256 {
		text = text[:256]
		for !utf8.ValidString(text) {
			text = text[:len(text)-1]
		}
	}
	j, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{code, text})
	return j
}

func encodeWant(sid uint64, flag byte, ids []canonical.ID) []byte {
	b := header(msgWant, sid, 1+32*len(ids))
	b = append(b, flag)
	for i := range ids {
		b = append(b, ids[i][:]...)
	}
	return b
}

func encodeAdmitted(sid uint64, a admitted) []byte {
	b := header(msgAdmitted, sid, 16)
	for _, v := range []uint64{a.Stored, a.Later, a.Refused, a.Held} {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// versionsBuilder packs versions into VERSIONS messages of at most max
// bytes and MaxBatch versions. It builds a message one byte into its
// buffer, so that it is sent as it is built (frame, conn.sendFrame), with
// no copy; a message that grows past smallVersions moves once into a
// buffer of sendBuffers, used again for the builder's next message and
// given back by release.
type versionsBuilder struct {
	sid    uint64
	max    int
	buf    []byte // the frame: its kind byte, then the message
	pooled *[]byte
	n      int
	flag   int // index of the flag byte
}

// smallVersions is how large a message grows in a buffer of its own
// before it moves into a pooled one: a push of a few versions, the most
// of them on a live session, does not take a whole frame's buffer.
const smallVersions = 64 << 10

// sendBuffers holds the buffers large VERSIONS are built in, of a default
// frame each: an answer streaming a store's versions to a peer builds
// all its messages in one, and the collector empties the pool of those
// unused.
var sendBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, transport.FrameBuffer)
	return &b
}}

func newVersionsBuilder(sid uint64, max int) *versionsBuilder {
	vb := &versionsBuilder{sid: sid, max: max}
	vb.reset()
	return vb
}

// reset starts a new message in the builder's buffer.
func (vb *versionsBuilder) reset() {
	vb.buf = append(vb.buf[:0], 0, msgVersions)
	vb.buf = binary.AppendUvarint(vb.buf, vb.sid)
	vb.flag = len(vb.buf)
	vb.buf = append(vb.buf, versAnswer)
	vb.n = 0
}

// fits reports whether one more version of l bytes fits.
func (vb *versionsBuilder) fits(l int) bool {
	return vb.n < MaxBatch && len(vb.buf)-1+binary.MaxVarintLen64+l <= vb.max
}

// alone reports whether a version of l bytes fits in an empty message.
func (vb *versionsBuilder) alone(l int) bool {
	return vb.flag+binary.MaxVarintLen64+l <= vb.max
}

func (vb *versionsBuilder) add(v []byte) {
	need := len(vb.buf) + binary.MaxVarintLen64 + len(v)
	if need > cap(vb.buf) && need > smallVersions {
		vb.large()
	}
	vb.buf = binary.AppendUvarint(vb.buf, uint64(len(v)))
	vb.buf = append(vb.buf, v...)
	vb.n++
}

// large moves the message into a buffer of sendBuffers, when the frame's
// bound fits in one (within it, fits, the pooled buffer never grows): an
// answer to a WANT, most often of many versions, takes one at once
// rather than growing its own to smallVersions first.
func (vb *versionsBuilder) large() {
	if vb.pooled != nil || vb.max >= transport.FrameBuffer {
		return
	}
	p := sendBuffers.Get().(*[]byte)
	vb.pooled, vb.buf = p, append((*p)[:0], vb.buf...)
}

// frame returns the message with flag as a frame, its kind byte first,
// for conn.sendFrame; once sent, reset starts the next one in its place.
func (vb *versionsBuilder) frame(flag byte) []byte {
	vb.buf[vb.flag] = flag
	return vb.buf
}

// take returns the message with flag and starts a new one in a new
// buffer.
func (vb *versionsBuilder) take(flag byte) []byte {
	out := vb.frame(flag)[1:]
	vb.buf, vb.pooled = nil, nil
	vb.reset()
	return out
}

// release gives the builder's pooled buffer back; the builder is not
// used after.
func (vb *versionsBuilder) release() {
	if vb.pooled != nil {
		*vb.pooled = vb.buf[:0]
		sendBuffers.Put(vb.pooled)
	}
	vb.buf, vb.pooled = nil, nil
}
