package index

import (
	"encoding/base64"
	"errors"
)

// A cursor is base64url (no padding) of: 1 ‖ the query's fingerprint (16
// bytes, bound.fp) ‖ the position of the last entry of the page it ends
// (eval.go, position). It says nothing a caller could not read in the page.

const (
	cursorVersion = 1
	// maxCursor bounds a cursor's bytes: a position holds at most a cut
	// value, @createdAt and a key.
	maxCursor = 1 + 16 + maxValueEnc + createdLen + 128 + 2
)

func encodeCursor(fp [16]byte, pos []byte) string {
	b := make([]byte, 0, 17+len(pos))
	b = append(append(append(b, cursorVersion), fp[:]...), pos...)
	return base64.RawURLEncoding.EncodeToString(b)
}

var errCursor = errors.New("not a cursor this index made: pass a page's next as it was")

// decodeCursor reads a cursor's fingerprint and position.
func decodeCursor(s string) (fp [16]byte, pos []byte, err error) {
	if len(s) > base64.RawURLEncoding.EncodedLen(maxCursor) {
		return fp, nil, errCursor
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(b) < 18 || b[0] != cursorVersion {
		return fp, nil, errCursor
	}
	copy(fp[:], b[1:17])
	return fp, b[17:], nil
}
