package seal

import (
	"strconv"

	"github.com/minca-go/minca/canonical"
)

// A file a version of a private space names (02 §3.1 files) is sealed
// before it is named, and the version's files entry names the sealed bytes:
// {hash: content id of the sealed bytes, size: their length}. So every
// peer, one without the key included, can check and keep a file by its
// hash, and the hash says nothing of what the file holds
// (docs/private-spaces.md, Files):
//
//	sealed file = keyId digest (32 bytes) ‖ envelope
//
// The keyId's 32 bytes name the key, since a file outlives the version
// that first named it and later versions, sealed under later keys, may
// name it too. The envelope is bound to the space and the key; not to a
// record, so records of the space share a file by its hash as they do in
// a public space.

// FileOverhead is what sealing adds to a file's length.
const FileOverhead = 32 + Overhead

// FileBinding binds a file to its space.
func FileBinding(space string) Binding { return Binding{Purpose: PurposeFile, Space: space} }

// SealFile seals a file's bytes under k for space.
func SealFile(k *Key, space string, data []byte) []byte {
	id, _ := canonical.ParseID(k.id) // k.id is always a content id
	out := make([]byte, 0, len(data)+FileOverhead)
	out = append(out, id[:]...)
	return k.Seal(out, data, FileBinding(space))
}

// FileKeyID is the keyId of the key a sealed file was sealed under.
func FileKeyID(sealed []byte) (string, error) {
	if len(sealed) < FileOverhead {
		return "", fail(ErrMalformed, CodeFile, "file", "a sealed file is a keyId's 32 bytes and an envelope, at least "+strconv.Itoa(FileOverhead)+" bytes; got "+strconv.Itoa(len(sealed)))
	}
	return canonical.ID(sealed[:32]).String(), nil
}

// OpenFile opens a sealed file under k for space. A file sealed under
// another key is ErrNoKey.
func OpenFile(k *Key, space string, sealed []byte) ([]byte, error) {
	id, err := FileKeyID(sealed)
	if err != nil {
		return nil, err
	}
	if id != k.id {
		return nil, fail(ErrNoKey, CodeNoKey, "file", "the file is sealed under "+id+", not "+k.id)
	}
	return k.Open(nil, sealed[32:], FileBinding(space), "file")
}
