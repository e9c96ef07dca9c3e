package peers

import (
	"bytes"
	"testing"

	"github.com/minca-go/minca/canonical"
)

// FuzzDecodeFile: whatever a peer sends as FILE-WANT, FILE-DATA,
// FILE-CREDIT or FILE-STOP (docs/sync.md §7.7), decode returns a message
// within the protocol's bounds — a size of 1 to 2^53-1, an offset below
// it, a credit of 1 to MaxFileCredit, FILE-DATA with bytes — or a typed
// error naming the rule, never panics, and what it returns encodes back
// to the same bytes.
func FuzzDecodeFile(f *testing.F) {
	file, version := canonical.IDOf([]byte("a file")), canonical.IDOf([]byte("a version"))
	f.Add(encodeFileWant(1, file, version, 5<<20, 0, 8<<20))
	f.Add(encodeFileWant(2, file, version, 1, 0, 1))
	f.Add(encodeFileWant(3, file, version, 1<<53-1, 1<<53-2, MaxFileCredit))
	f.Add(encodeFileWant(4, file, version, 10, 10, 1))              // offset at the size
	f.Add(encodeFileWant(5, file, version, 10, 0, MaxFileCredit+1)) // credit past the bound
	f.Add(append(fileDataHead(6, file, 4096, 3), "abc"...))         // FILE-DATA
	f.Add(fileDataHead(7, file, 0, 0))                              // FILE-DATA with no bytes
	f.Add(encodeFileCredit(8, file, 1<<20))                         // FILE-CREDIT
	f.Add(append(encodeFileCredit(9, file, 1<<20), 0))              // bytes after the credit
	f.Add(encodeFileStop(10, file, codeFileNotHeld, "the file is not held here"))
	f.Add(encodeFileStop(11, file, codeFileStalled, ""))
	f.Add(append(encodeFileStop(12, file, "nocode", "x")[:40], '{')) // cut JSON
	f.Add([]byte{msgFileWant, 0x01})                                 // no digest
	f.Add(append([]byte{msgFileData, 0x01}, make([]byte, 32)...))    // no offset
	f.Fuzz(func(t *testing.T, b []byte) {
		// Where the transport places a FILE-DATA's bytes: never a panic,
		// and for one that decodes, where its bytes start.
		at := fileDataAt(b)
		m, err := decode(b)
		if err == nil && m.typ == msgFileData {
			if want := len(b) - len(m.file.data); at != want {
				t.Fatalf("fileDataAt says FILE-DATA's bytes start at %d; they start at %d", at, want)
			}
		} else if err == nil && at != -1 {
			t.Fatalf("fileDataAt says %s has file bytes at %d", msgNames[m.typ], at)
		}
		if err != nil {
			if _, ok := err.(*wireError); !ok {
				t.Fatalf("an error of type %T", err)
			}
			return
		}
		if m.typ < msgFileWant || m.typ > msgFileStop {
			return // FuzzDecode checks the others
		}
		fm := m.file
		if fm == nil {
			t.Fatalf("%s decoded with no file", msgNames[m.typ])
		}
		var again []byte
		switch m.typ {
		case msgFileWant:
			if fm.size == 0 || fm.size > maxFileSize || fm.offset >= fm.size || fm.credit == 0 || fm.credit > MaxFileCredit {
				t.Fatalf("FILE-WANT past its bounds: size %d, offset %d, credit %d", fm.size, fm.offset, fm.credit)
			}
			again = encodeFileWant(m.sid, fm.file, fm.version, int64(fm.size), int64(fm.offset), int64(fm.credit))
		case msgFileData:
			if len(fm.data) == 0 {
				t.Fatal("FILE-DATA with no bytes")
			}
			again = append(fileDataHead(m.sid, fm.file, int64(fm.offset), len(fm.data)), fm.data...)
		case msgFileCredit:
			if fm.credit == 0 || fm.credit > MaxFileCredit {
				t.Fatalf("FILE-CREDIT of %d", fm.credit)
			}
			again = encodeFileCredit(m.sid, fm.file, int64(fm.credit))
		case msgFileStop:
			if !validCode(fm.code) || len(fm.text) > 256 {
				t.Fatalf("FILE-STOP %q %q", fm.code, fm.text)
			}
			return // JSON members may be written differently
		}
		// A uvarint may be written long; the canonical form is shorter.
		if len(again) > len(b) || (len(again) == len(b) && !bytes.Equal(again, b)) {
			t.Fatalf("%x decodes and encodes as %x", b, again)
		}
	})
}
