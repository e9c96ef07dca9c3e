package negentropy

import (
	"errors"
	"fmt"
)

// Errors a caller may decide on.
var (
	// ErrMalformed is wrapped by every error about a peer's message that
	// breaks the wire format of §Message, §Range, §Bound or §Varint.
	ErrMalformed = errors.New("negentropy: malformed message")
	// ErrFrameSizeLimit reports a frame size limit under 4096 bytes, which
	// the reference implementations refuse too.
	ErrFrameSizeLimit = errors.New("negentropy: frame size limit below 4096")
	// ErrNotSealed reports a read of a [Vector] before [Vector.Seal].
	ErrNotSealed = errors.New("negentropy: storage not sealed")
	// ErrSealed reports an insert into a sealed [Vector].
	ErrSealed = errors.New("negentropy: storage already sealed")
	// ErrDuplicate reports the same item inserted twice.
	ErrDuplicate = errors.New("negentropy: duplicate item")
	// ErrInfiniteTimestamp reports an item with the reserved timestamp
	// [MaxTimestamp] (§Preparation).
	ErrInfiniteTimestamp = errors.New("negentropy: item timestamp is the reserved infinity")
	// ErrRange reports an index range outside a storage.
	ErrRange = errors.New("negentropy: index range out of bounds")
	// ErrInitiated reports a second [Client.Initiate].
	ErrInitiated = errors.New("negentropy: already initiated")
)

// VersionError is the client's error when the server answers with another
// protocol version byte in 0x60..0x6f: the server speaks only that version
// (§Message). Version is the byte it sent.
type VersionError struct {
	Version byte
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("negentropy: peer wants protocol version %d (byte 0x%02x), we speak only version 1", int(e.Version)-0x60, e.Version)
}
