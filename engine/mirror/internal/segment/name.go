package segment

import (
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Prefix is where segments live in a blob store: Prefix + writer + "/" +
// seq (12 digits) + "-" + hash (32 hex) + ".seg".
const Prefix = "segments/"

// MaxSeq is the largest sequence number a name can carry in 12 digits, so
// names sort as their sequence numbers do.
const MaxSeq = 999_999_999_999

const hashHexLen = 32

var writerEnc = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewWriterID returns a random writer id: 20 characters of [a-z2-7] (100
// bits), lowercase so it can't clash with another after case folding (F6).
func NewWriterID(rand io.Reader) (string, error) {
	var b [13]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return "", fmt.Errorf("minca/segment: writer id: %w", err)
	}
	return writerEnc.EncodeToString(b[:])[:WriterLen], nil
}

// ValidWriterID reports whether s is a writer id: exactly 20 of [a-z2-7].
func ValidWriterID(s string) bool {
	if len(s) != WriterLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// WriterPrefix is the prefix of a writer's segment names.
func WriterPrefix(writer string) string { return Prefix + writer + "/" }

// HashHex is the content hash a segment's name carries: the first 16 bytes
// of its checksum, in lowercase hex.
func (t *Trailer) HashHex() string { return hex.EncodeToString(t.Sum[:hashHexLen/2]) }

// Name is the name a segment is published under.
func (t *Trailer) Name() string { return Prefix + t.Writer + "/" + fmtTail(t.Seq, t.HashHex()) }

// NameSeqBound is the name every name of writer at seq ≥ s sorts after.
func NameSeqBound(writer string, s uint64) string {
	return fmt.Sprintf("%s%s/%012d", Prefix, writer, s)
}

// NameInfo is what a segment's name claims. A hint: the content decides.
type NameInfo struct {
	Writer string
	Seq    uint64
	Hash   string // 32 hex characters
}

// ParseName reads a segment name; ok is false for anything else.
func ParseName(name string) (n NameInfo, ok bool) {
	rest, found := strings.CutPrefix(name, Prefix)
	if !found || len(rest) != WriterLen+1+12+1+hashHexLen+4 {
		return n, false
	}
	n.Writer = rest[:WriterLen]
	rest = rest[WriterLen:]
	if !ValidWriterID(n.Writer) || rest[0] != '/' || rest[13] != '-' || !strings.HasSuffix(rest, ".seg") {
		return n, false
	}
	for _, c := range rest[1:13] {
		if c < '0' || c > '9' {
			return n, false
		}
	}
	seq, err := strconv.ParseUint(rest[1:13], 10, 64)
	if err != nil || seq == 0 {
		return n, false
	}
	n.Seq = seq
	n.Hash = rest[14 : 14+hashHexLen]
	for _, c := range n.Hash {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return n, false
		}
	}
	return n, true
}

// Matches reports whether a name's claims agree with a segment's content.
func (n NameInfo) Matches(t *Trailer) bool {
	return n.Writer == t.Writer && n.Seq == t.Seq && n.Hash == t.HashHex()
}

// Name is the name these parts make.
func (n NameInfo) Name() string { return Prefix + n.Writer + "/" + fmtTail(n.Seq, n.Hash) }

func fmtTail(seq uint64, hash string) string { return fmt.Sprintf("%012d-%s.seg", seq, hash) }
