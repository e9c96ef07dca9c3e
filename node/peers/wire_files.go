package peers

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/minca-go/minca/canonical"
)

// Message types of file transfers (docs/sync.md §7.7).
const (
	msgFileWant   byte = 0x08 // ask for a file from an offset, with credit
	msgFileData   byte = 0x09 // a file's bytes from an offset
	msgFileCredit byte = 0x0A // more credit for a transfer
	msgFileStop   byte = 0x0B // a transfer ends, with a reason
)

// Limits of file transfers (docs/sync.md §7.7, Bounds).
const (
	// MaxFileCredit bounds a FILE-WANT's credit, and the credit granted
	// and not yet received in a transfer.
	MaxFileCredit = 64 << 20
	// MaxFileTransfers is how many transfers run each way on a
	// connection, small ones apart.
	MaxFileTransfers = 8
	// MaxSmallTransfers is how many small transfers run each way on a
	// connection besides: those whose credit covers the rest of a file
	// of at most SmallFile bytes. The holder serves them in turn, so many
	// small files move in one round trip.
	MaxSmallTransfers = 256
	// SmallFile is the most bytes a small transfer has left to send.
	SmallFile = 64 << 10
	// maxFileSize is the largest size a version may name (02 §3.1).
	maxFileSize = 1<<53 - 1
)

// fileMsg is the body of a FILE-* message.
type fileMsg struct {
	file    canonical.ID
	version canonical.ID // FILE-WANT
	size    uint64       // FILE-WANT
	offset  uint64       // FILE-WANT, FILE-DATA
	credit  uint64       // FILE-WANT, FILE-CREDIT
	data    []byte       // FILE-DATA
	code    string       // FILE-STOP
	text    string       // FILE-STOP
}

// decodeFile reads the body of a FILE-* message into m.file.
func decodeFile(m *message) error {
	name := msgNames[m.typ]
	b := m.body
	if len(b) < 32 {
		return malformedf("%s: a file's digest of 32 bytes first", name)
	}
	f := &fileMsg{}
	copy(f.file[:], b)
	b = b[32:]
	uv := func(what string) (uint64, error) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, malformedf("%s: %s is not a uvarint", name, what)
		}
		b = b[n:]
		return v, nil
	}
	var err error
	switch m.typ {
	case msgFileWant:
		if len(b) < 32 {
			return malformedf("FILE-WANT: a version's digest of 32 bytes after the file's")
		}
		copy(f.version[:], b)
		b = b[32:]
		if f.size, err = uv("the size"); err != nil {
			return err
		}
		if f.offset, err = uv("the offset"); err != nil {
			return err
		}
		if f.credit, err = uv("the credit"); err != nil {
			return err
		}
		switch {
		case f.size == 0 || f.size > maxFileSize:
			return malformedf("FILE-WANT: the size is 1 to 2^53-1")
		case f.offset >= f.size:
			return malformedf("FILE-WANT: the offset is less than the size")
		case f.credit == 0 || f.credit > MaxFileCredit:
			return malformedf("FILE-WANT: the credit is 1 to %d bytes", MaxFileCredit)
		case len(b) != 0:
			return malformedf("FILE-WANT: bytes after the credit")
		}
	case msgFileData:
		if f.offset, err = uv("the offset"); err != nil {
			return err
		}
		if len(b) == 0 {
			return malformedf("FILE-DATA: no bytes after the offset")
		}
		f.data = b
	case msgFileCredit:
		if f.credit, err = uv("the credit"); err != nil {
			return err
		}
		if f.credit == 0 || f.credit > MaxFileCredit {
			return malformedf("FILE-CREDIT: the credit is 1 to %d bytes", MaxFileCredit)
		}
		if len(b) != 0 {
			return malformedf("FILE-CREDIT: bytes after the credit")
		}
	case msgFileStop:
		var e struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if err := strictJSON(b, &e, "FILE-STOP"); err != nil {
			return err
		}
		if !validCode(e.Code) || len(e.Message) > 256 || !utf8.ValidString(e.Message) {
			return malformedf("FILE-STOP: code is a reason code (family/name) and message at most 256 bytes of UTF-8")
		}
		f.code, f.text = e.Code, e.Message
	}
	m.file = f
	return nil
}

func encodeFileWant(sid uint64, file, version canonical.ID, size, offset, credit int64) []byte {
	b := header(msgFileWant, sid, 64+30)
	b = append(b, file[:]...)
	b = append(b, version[:]...)
	b = binary.AppendUvarint(b, uint64(size))
	b = binary.AppendUvarint(b, uint64(offset))
	return binary.AppendUvarint(b, uint64(credit))
}

// fileDataHead is FILE-DATA up to its bytes: the caller appends them.
func fileDataHead(sid uint64, file canonical.ID, offset int64, n int) []byte {
	return appendFileDataHead(make([]byte, 0, fileDataHeadMax+n), sid, file, offset)
}

// fileDataHeadMax is the longest FILE-DATA up to its bytes.
const fileDataHeadMax = 1 + 2*binary.MaxVarintLen64 + 32

// appendFileDataHead appends FILE-DATA up to its bytes to b.
func appendFileDataHead(b []byte, sid uint64, file canonical.ID, offset int64) []byte {
	b = append(b, msgFileData)
	b = binary.AppendUvarint(b, sid)
	b = append(b, file[:]...)
	return binary.AppendUvarint(b, uint64(offset))
}

// fileDataAt is where a FILE-DATA's file bytes start in msg, its message
// as far as read ([transport.Options.PlaceData]); -1 for another message
// or a head not whole in msg. The transport places them on a disk block's
// boundary, so the asker writes them to the partial file with no copy.
func fileDataAt(msg []byte) int {
	if len(msg) == 0 || msg[0] != msgFileData {
		return -1
	}
	at := 1
	if _, n := binary.Uvarint(msg[at:]); n > 0 {
		at += n
	} else {
		return -1
	}
	at += 32
	if at >= len(msg) {
		return -1
	}
	if _, n := binary.Uvarint(msg[at:]); n > 0 {
		at += n
	} else {
		return -1
	}
	if at >= len(msg) {
		return -1
	}
	return at
}

func encodeFileCredit(sid uint64, file canonical.ID, credit int64) []byte {
	b := header(msgFileCredit, sid, 32+binary.MaxVarintLen64)
	b = append(b, file[:]...)
	return binary.AppendUvarint(b, uint64(credit))
}

func encodeFileStop(sid uint64, file canonical.ID, code, text string) []byte {
	j := reasonJSON(code, text)
	b := header(msgFileStop, sid, 32+len(j))
	b = append(b, file[:]...)
	return append(b, j...)
}
