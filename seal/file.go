package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"io"
	"strconv"

	"github.com/minca-go/minca/canonical"
)

// A file a version of a private space names (02 §3.1 files) is sealed
// before it is named, in chunks (docs/private-spaces.md §4, Files):
//
//	sealed file = keyId digest (32) ‖ 0x02 ‖ salt (32) ‖ chunk₀ ‖ … ‖ chunkₙ₋₁
//	subkey      = HKDF-SHA-256(IKM = K, salt, info = "minca/seal-file/v1", L = 32)
//	chunkᵢ      = AES-256-GCM-Seal(subkey, nonceᵢ, pieceᵢ, ad)
//	nonceᵢ      = i as 11 bytes big-endian ‖ (0x01 for the last chunk, else 0x00)
//	ad          = the binding of purpose "file" and the space (no record)
//
// Pieces are FileChunk bytes, the last shorter or whole; an empty file is
// one empty piece. The version's files entry names the sealed bytes, so
// every peer, one without the key included, checks and keeps a file by
// its hash, and the hash says nothing of what the file holds. The keyId's
// 32 bytes name the key, since later versions, sealed under later keys,
// may name the same file. The nonce binds each chunk to its place and the
// last one to the end (STREAM): no chunk can be dropped, reordered,
// repeated or cut off unnoticed.
const (
	// FileChunk is the plaintext bytes of one chunk of a sealed file.
	FileChunk = 64 << 10
	// FileHead is the bytes before the first chunk: keyId, format, salt.
	FileHead = 32 + 1 + fileSaltLen
	// sealedChunk is a whole chunk's length, its tag included.
	sealedChunk = FileChunk + tagLen

	fileFormat  = 0x02
	fileSaltLen = 32
	infoFile    = "minca/seal-file/v1"
)

// FileOverhead is the least sealing adds to a file's length: its head and
// one tag. [SealedFileSize] is the exact length.
const FileOverhead = FileHead + tagLen

// FileBinding binds a file to its space.
func FileBinding(space string) Binding { return Binding{Purpose: PurposeFile, Space: space} }

// SealedFileSize is the length of the sealed file of a file of n bytes.
func SealedFileSize(n int64) int64 {
	chunks := (n + FileChunk - 1) / FileChunk
	if chunks == 0 {
		chunks = 1
	}
	return FileHead + n + chunks*tagLen
}

// OpenedFileSize is the length of the file a sealed file of n bytes
// holds, or an error when no sealed file is n bytes long.
func OpenedFileSize(n int64) (int64, error) {
	body := n - FileHead
	if body < tagLen {
		return 0, fileShape("a sealed file is at least " + strconv.Itoa(FileOverhead) + " bytes (head and one tag); got " + strconv.FormatInt(n, 10))
	}
	chunks := (body + sealedChunk - 1) / sealedChunk
	if last := body - (chunks-1)*sealedChunk; last < tagLen {
		return 0, fileShape("the last chunk of a sealed file is at least a tag; this one is " + strconv.FormatInt(last, 10) + " bytes")
	}
	return body - chunks*tagLen, nil
}

func fileShape(msg string) error { return fail(ErrMalformed, CodeFile, "file", msg) }

// fileAEAD is the AES-256-GCM of one sealed file's subkey.
func fileAEAD(k *Key, salt []byte) cipher.AEAD {
	sk := derive(k.b[:], salt, infoFile)
	block, err := aes.NewCipher(sk[:])
	if err != nil {
		panic("minca/seal: aes: " + err.Error()) // a 32-byte key never fails
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("minca/seal: gcm: " + err.Error())
	}
	return aead
}

// chunkNonce is nonceᵢ.
func chunkNonce(i int64, last bool) [nonceLen]byte {
	var n [nonceLen]byte
	binary.BigEndian.PutUint64(n[3:11], uint64(i))
	if last {
		n[11] = 1
	}
	return n
}

// FileSealer seals a file as it is written: Write takes the file's bytes,
// Close writes the last chunk. It holds one chunk at a time, whatever the
// file's size.
type FileSealer struct {
	w      io.Writer
	aead   cipher.AEAD
	ad     []byte
	piece  []byte // plaintext of the chunk being filled
	out    []byte // the chunk sealed
	index  int64
	err    error
	closed bool
}

// NewFileSealer starts sealing a file under k for space onto w, with a
// fresh random salt. Nothing is written until the first chunk fills or
// Close.
func NewFileSealer(k *Key, space string, w io.Writer) *FileSealer {
	var salt [fileSaltLen]byte
	rand.Read(salt[:])
	return newFileSealer(k, space, w, salt)
}

func newFileSealer(k *Key, space string, w io.Writer, salt [fileSaltLen]byte) *FileSealer {
	head := make([]byte, 0, FileHead)
	head = append(head, k.digest[:]...)
	head = append(head, fileFormat)
	head = append(head, salt[:]...)
	s := &FileSealer{w: w, aead: fileAEAD(k, salt[:]), ad: FileBinding(space).ad(k.id),
		piece: make([]byte, 0, FileChunk), out: make([]byte, 0, sealedChunk)}
	_, s.err = w.Write(head)
	return s
}

// Write seals p's bytes as they fill chunks.
func (s *FileSealer) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.closed {
		return 0, io.ErrClosedPipe
	}
	n := 0
	for len(p) > 0 {
		if len(s.piece) == FileChunk {
			// A full chunk goes out only once more follows: the last one
			// is sealed as last by Close.
			if err := s.flush(false); err != nil {
				return n, err
			}
		}
		c := copy(s.piece[len(s.piece):FileChunk], p)
		s.piece = s.piece[:len(s.piece)+c]
		p = p[c:]
		n += c
	}
	return n, nil
}

func (s *FileSealer) flush(last bool) error {
	nonce := chunkNonce(s.index, last)
	s.out = s.aead.Seal(s.out[:0], nonce[:], s.piece, s.ad)
	if _, err := s.w.Write(s.out); err != nil {
		s.err = err
		return err
	}
	s.index++
	s.piece = s.piece[:0]
	return nil
}

// Close seals the last chunk. It does not close the writer.
func (s *FileSealer) Close() error {
	if s.err != nil || s.closed {
		return s.err
	}
	s.closed = true
	return s.flush(true)
}

// SealFile seals a file's bytes under k for space, whole.
func SealFile(k *Key, space string, data []byte) []byte {
	out := &appendWriter{b: make([]byte, 0, SealedFileSize(int64(len(data))))}
	s := NewFileSealer(k, space, out)
	s.Write(data)
	s.Close()
	return out.b
}

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// FileKeyID is the keyId of the key a sealed file was sealed under, from
// its first bytes (at least FileHead of them).
func FileKeyID(head []byte) (string, error) {
	if len(head) < FileHead {
		return "", fileShape("a sealed file starts with a keyId's 32 bytes, a format byte and a 32-byte salt; got " + strconv.Itoa(len(head)) + " bytes")
	}
	if head[32] != fileFormat {
		return "", fileShape("a sealed file's format byte is 0x02, got " + strconv.Itoa(int(head[32])))
	}
	return canonical.ID(head[:32]).String(), nil
}

// FileOpener reads a sealed file's plaintext at any offset, opening only
// the chunks it needs, each checked before any of its bytes is returned.
// It is an io.ReaderAt; it is not safe for concurrent use.
type FileOpener struct {
	r      io.ReaderAt
	aead   cipher.AEAD
	ad     []byte
	size   int64 // plaintext
	chunks int64
	sealed int64
	buf    []byte // one sealed chunk
	plain  []byte // the last chunk opened
	at     int64  // its index, -1 when none
}

// NewFileOpener opens the sealed file of sealedSize bytes that r reads,
// under k for space. A sealed file under another key is ErrNoKey; one
// not of the format is ErrMalformed. Chunks that do not authenticate fail
// ReadAt with ErrOpen.
func NewFileOpener(k *Key, space string, r io.ReaderAt, sealedSize int64) (*FileOpener, error) {
	size, err := OpenedFileSize(sealedSize)
	if err != nil {
		return nil, err
	}
	head := make([]byte, FileHead)
	if err := readFull(r, head, 0); err != nil {
		return nil, err
	}
	id, err := FileKeyID(head)
	if err != nil {
		return nil, err
	}
	if id != k.id {
		return nil, fail(ErrNoKey, CodeNoKey, "file", "the file is sealed under "+id+", not "+k.id)
	}
	chunks := (sealedSize - FileHead + sealedChunk - 1) / sealedChunk
	return &FileOpener{r: r, aead: fileAEAD(k, head[33:]), ad: FileBinding(space).ad(k.id), size: size,
		chunks: chunks, sealed: sealedSize, at: -1}, nil
}

// Size is the length of the file the sealed file holds.
func (o *FileOpener) Size() int64 { return o.size }

// chunk opens chunk i into o.plain.
func (o *FileOpener) chunk(i int64) error {
	if o.at == i {
		return nil
	}
	off := FileHead + i*sealedChunk
	n := min(int64(sealedChunk), o.sealed-off)
	if cap(o.buf) < int(n) {
		o.buf = make([]byte, sealedChunk)
	}
	buf := o.buf[:n]
	if err := readFull(o.r, buf, off); err != nil {
		return err
	}
	nonce := chunkNonce(i, i == o.chunks-1)
	out, err := o.aead.Open(o.plain[:0], nonce[:], buf, o.ad)
	if err != nil {
		o.at = -1
		return fail(ErrOpen, CodeOpen, "file", "chunk "+strconv.FormatInt(i, 10)+" of the sealed file does not open: it was changed, moved, cut off, or sealed for another space or key")
	}
	o.plain, o.at = out, i
	return nil
}

// ReadAt reads the file's bytes at off.
func (o *FileOpener) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fileShape("a negative offset")
	}
	n := 0
	for len(p) > 0 {
		if off >= o.size {
			return n, io.EOF
		}
		i := off / FileChunk
		if err := o.chunk(i); err != nil {
			return n, err
		}
		c := copy(p, o.plain[off-i*FileChunk:])
		p, off, n = p[c:], off+int64(c), n+c
	}
	return n, nil
}

// OpenFile opens a sealed file under k for space, whole. A file sealed
// under another key is ErrNoKey.
func OpenFile(k *Key, space string, sealed []byte) ([]byte, error) {
	o, err := NewFileOpener(k, space, bytesReaderAt(sealed), int64(len(sealed)))
	if err != nil {
		return nil, err
	}
	out := make([]byte, o.size)
	if _, err := o.ReadAt(out, 0); err != nil && err != io.EOF {
		return nil, err
	}
	if o.size == 0 { // the one empty chunk must still open
		if err := o.chunk(0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readFull reads len(p) bytes at off: a ReaderAt may say io.EOF with all
// of them.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
