// Package keys is the engine's key layout, the same on every KV backend.
// Every key starts with one byte naming its table; ids are the 32-byte
// digests they name; spaces are a 33-byte tag. Integers are big-endian so
// that byte order is numeric order.
//
//	'e' digest                         → vseq (8 bytes): the version is held, its value is at 'v' vseq
//	'v' vseq                           → the version as held: its envelope value, then its body
//	                                     (canonical JSON) when it is whole; in order of arrival.
//	                                     A record's first standing version's is the one byte 0: its
//	                                     value is at 'c' vseq (layouts 11 to 15: 0 ‖ rec, its head
//	                                     holding it)
//	'c' vseq                           → the value of a record's first standing version (its current
//	                                     version), as 'v' holds the others': in order of arrival
//	'h' rec                            → the record's head: top and first standing, how each is held
//	                                     and at which vseq (layouts 11 to 15: with the first standing
//	                                     version's envelope and body)
//	'H' num order vseq                 → a held version's standing and flags in its record (02 §4.3
//	                                     order: one seq's versions sorted by id as read), num the
//	                                     record's number, which its head names (layout 18 on)
//	'h' rec order vseq                 → the same, for a record whose head names no number (layouts
//	                                     before 18; before 15: 'h' rec order id, the id's text)
//	'S' space                          → the space's id as text
//	'o' space millis digest            → 0xFF ‖ vseq ‖ collection: the sync order, and where the
//	                                     version's value is (layouts before 17: the collection alone)
//	'l' space line n                   → the versions held at that place of a writer's line
//	                                     (02 §4.10), each its vseq as a uvarint (layouts before
//	                                     13: each its digest); PlaceValue says which
//	'L' awaited                        → digests of versions whose log.prev names it, not held
//	'x' space digestA digestB          → kind: line proofs found
//	'a' space root vseq                → nothing: held versions by the root they were admitted
//	                                     with (the judge's Checked.Root), for a judge's re-judging;
//	                                     vseq a uvarint (layouts before 12: the version's digest)
//	'g' seq form                       → runs of (source, (version, kind, facts)…): one batch's
//	                                     changes, seq the last's; form 3 names each version by
//	                                     vseq, 2 (and layouts before 14) by digest (engine/changelog.go)
//	'w' digest                         → a waiting version and what it waits for
//	'W' awaited digest                 → nothing: who waits for what
//	'q' seq digest                     → nothing: waiting versions by arrival
//	'Q' source seq digest              → arrival (Unix ms) ‖ size ‖ from: waiting versions by
//	                                     the source that sent them, oldest first
//	'F' digest                         → a file's bytes, as stores before FileDir kept them
//	                                     (moved to the FileDir and 'f' when the store opens)
//	'f' digest                         → size ‖ when kept (Unix ms), uvarints: the file is held,
//	                                     its bytes in the store's FileDir
//	'n' file space digest              → size (uvarint) ‖ space: a version held whole (its body
//	                                     kept) names the file in its files
//	'N' space file                     → size (uvarint) ‖ space: a file 'n' names in the space
//	                                     that is not held ('f'): the files to fetch
//	'm' name                           → a caller's meta value
//	'i' key                            → an Indexer's own keys and values (engine/indexer.go)
//	'_' name                           → the engine's own counters
//
// Versions are kept in the order they were stored ('v'), and found by id
// through the small 'e' entries: a batch's versions go on a few pages of
// a B-tree at the end of the table, not one page each at random places.
//
// rec is space ‖ key ‖ 0x00 (a record key has no 0x00, so no rec is a
// prefix of another); order is (2^53−1 − seq), newest first by 02 §4.3,
// then the version's vseq (a uvarint; before layout 15 the id's text,
// which also put one seq's versions in 02 §4.3 order). A record's head
// sorts just before its history entries, on the same page of a B-tree:
// admission writes both. Only a head's key ends in 0x00 (neither an id's
// text nor the shortest uvarint of a vseq, never 0, does).
package keys

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"

	"github.com/minca-go/minca/canonical"
)

// Table prefixes.
const (
	ID        = 'e'
	Version   = 'v'
	Current   = 'c'
	History   = 'h' // and heads
	HistNum   = 'H' // history entries by record number (layout 18 on)
	Space     = 'S'
	Order     = 'o'
	Line      = 'l'
	LogPrev   = 'L'
	Proof     = 'x'
	Root      = 'a'
	Change    = 'g'
	Wait      = 'w'
	WaitFor   = 'W'
	WaitQueue = 'q'
	WaitFrom  = 'Q'
	File      = 'F'
	FileHeld  = 'f'
	FileNamed = 'n'
	FileLacks = 'N'
	Meta      = 'm'
	Index     = 'i'
	Internal  = '_'
)

// SpaceLen is the length of a space tag.
const SpaceLen = 33

// SpaceTag is a space's 33-byte tag: 0x01 ‖ digest for a space named by a
// content id in its canonical text, else 0x02 ‖ SHA-256 of the text (a space
// id is compared as a string, 02 §3.1, so "B…" is not "b…").
func SpaceTag(space string) [SpaceLen]byte {
	var t [SpaceLen]byte
	if d, ok := ParseExact(space); ok {
		t[0] = 1
		copy(t[1:], d[:])
		return t
	}
	t[0] = 2
	h := sha256.Sum256([]byte("minca/engine/space|" + space))
	copy(t[1:], h[:])
	return t
}

// ParseExact decodes an id that is in its canonical text (lower case),
// the only form a verified version's id has: [canonical.ParseExactID].
func ParseExact(id string) (canonical.ID, bool) { return canonical.ParseExactID(id) }

// Awaited is the 32-byte tag of an id something waits for: its digest, or
// a hash of a text that is no id (which then never arrives).
func Awaited(id string) canonical.ID {
	if d, ok := ParseExact(id); ok {
		return d
	}
	return sha256.Sum256([]byte("minca/engine/awaited|" + id))
}

// LineTag names a writer's line in a space: author and collection (02 §4.10).
// A verified author is a did:key, which holds no 0x00.
func LineTag(author, collection string) [32]byte {
	// Hashed from a buffer on the stack when it fits: made for every
	// version stored, twice.
	var buf [192]byte
	b := append(append(append(append(buf[:0], "minca/engine/line|"...), author...), 0), collection...)
	return sha256.Sum256(b)
}

func withDigest(prefix byte, d canonical.ID) []byte {
	k := make([]byte, 1+32)
	k[0] = prefix
	copy(k[1:], d[:])
	return k
}

// IDKey is 'e' digest.
func IDKey(d canonical.ID) []byte { return withDigest(ID, d) }

// AppendIDKey appends IDKey(d) to dst. The Append forms let a batch build
// its keys in a buffer of its own, each key made once.
func AppendIDKey(dst []byte, d canonical.ID) []byte { return append(append(dst, ID), d[:]...) }

// VersionKey is 'v' vseq.
func VersionKey(vseq uint64) []byte { return AppendVersionKey(nil, vseq) }

// AppendVersionKey appends VersionKey(vseq) to dst.
func AppendVersionKey(dst []byte, vseq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, Version), vseq)
}

// CurrentKey is 'c' vseq.
func CurrentKey(vseq uint64) []byte { return AppendCurrentKey(nil, vseq) }

// AppendCurrentKey appends CurrentKey(vseq) to dst.
func AppendCurrentKey(dst []byte, vseq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, Current), vseq)
}

// FileHeldKey is 'f' digest.
func FileHeldKey(d canonical.ID) []byte { return withDigest(FileHeld, d) }

// FileKey is 'F' digest.
func FileKey(d canonical.ID) []byte { return withDigest(File, d) }

// FileNamedKey is 'n' file space digest: the version digest names the
// file, held whole.
func FileNamedKey(file canonical.ID, space [SpaceLen]byte, d canonical.ID) []byte {
	k := make([]byte, 0, 1+32+SpaceLen+32)
	k = append(append(append(append(k, FileNamed), file[:]...), space[:]...), d[:]...)
	return k
}

// FileLacksKey is 'N' space file: the file is named in the space and not
// held.
func FileLacksKey(space [SpaceLen]byte, file canonical.ID) []byte {
	k := make([]byte, 0, 1+SpaceLen+32)
	return append(append(append(k, FileLacks), space[:]...), file[:]...)
}

// WaitKey is 'w' digest.
func WaitKey(d canonical.ID) []byte { return withDigest(Wait, d) }

// Rec is a record's prefix part: space tag ‖ key ‖ 0x00.
func Rec(space, key string) []byte {
	return AppendRec(make([]byte, 0, RecLen(key)), SpaceTag(space), key)
}

// RecTag is the tag (SpaceTag) of the space a rec (Rec) is in, which it
// begins with.
func RecTag(rec []byte) (t [SpaceLen]byte) {
	copy(t[:], rec)
	return t
}

// RecLen is the length of a record's rec (Rec) with this key.
func RecLen(key string) int { return SpaceLen + len(key) + 1 }

// AppendRec appends the rec of the record key in the space tagged t
// (SpaceTag) to dst: Rec, for a caller that makes many in one buffer.
func AppendRec(dst []byte, t [SpaceLen]byte, key string) []byte {
	dst = append(dst, t[:]...)
	dst = append(dst, key...)
	return append(dst, 0)
}

// HeadKey is 'h' rec, the record's history prefix itself.
func HeadKey(rec []byte) []byte { return append([]byte{History}, rec...) }

// AppendHeadKey appends HeadKey(rec) to dst.
func AppendHeadKey(dst, rec []byte) []byte { return append(append(dst, History), rec...) }

// IsHead reports whether a key of the 'h' table is a record's head.
func IsHead(k []byte) bool { return len(k) > 0 && k[len(k)-1] == 0 }

// HistoryPrefix is 'h' rec: every held version of the record.
func HistoryPrefix(rec []byte) []byte { return append([]byte{History}, rec...) }

// HistoryKey is 'h' rec order vseq: the version's place in its record's
// history (02 §4.3: newest seq first) and its value's vseq as a uvarint.
// Versions of one seq sort here by vseq, not by id: a reader in 02 §4.3
// order sorts each run of one seq by the ids their values name
// (HistoryEntry says which form a key is in).
func HistoryKey(rec []byte, seq int64, vseq uint64) []byte {
	return AppendHistoryKey(make([]byte, 0, 1+len(rec)+8+binary.MaxVarintLen64), rec, seq, vseq)
}

// AppendHistoryKey appends HistoryKey(rec, seq, vseq) to dst.
func AppendHistoryKey(dst, rec []byte, seq int64, vseq uint64) []byte {
	k := append(dst, History)
	k = append(k, rec...)
	k = binary.BigEndian.AppendUint64(k, uint64(1<<53-1-seq))
	return binary.AppendUvarint(k, vseq)
}

// HistoryIDKey is 'h' rec order id, a history key as layouts before 15
// wrote it: the version named by its id's text, which sorts one seq's
// versions in 02 §4.3 order by itself.
func HistoryIDKey(rec []byte, seq int64, id string) []byte {
	k := make([]byte, 0, 1+len(rec)+8+len(id))
	k = append(k, History)
	k = append(k, rec...)
	k = binary.BigEndian.AppendUint64(k, uint64(1<<53-1-seq))
	return append(k, id...)
}

// AppendRecNum appends a record number so that byte order is numeric
// order and small numbers are short: a byte n (1–8), then the number's n
// bytes big-endian, the first not 0. A number is never 0.
func AppendRecNum(dst []byte, num uint64) []byte {
	n := 1
	for x := num >> 8; x > 0; x >>= 8 {
		n++
	}
	dst = append(dst, byte(n))
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(num>>(8*i)))
	}
	return dst
}

// ReadRecNum reads a record number AppendRecNum wrote at the start of b:
// the number and its length; n is 0 on bytes of no number (cut short, a
// length past 8, a first byte 0, or the number 0).
func ReadRecNum(b []byte) (num uint64, n int) {
	if len(b) < 2 || b[0] < 1 || b[0] > 8 || len(b) < 1+int(b[0]) || b[1] == 0 {
		return 0, 0
	}
	for _, c := range b[1 : 1+int(b[0])] {
		num = num<<8 | uint64(c)
	}
	return num, 1 + int(b[0])
}

// HistNumPrefix is 'H' num: every held version of the record numbered
// num (layout 18 on).
func HistNumPrefix(num uint64) []byte { return AppendRecNum([]byte{HistNum}, num) }

// HistNumKey is 'H' num order vseq: a history entry of the record numbered
// num, order and vseq as in HistoryKey. Numbers are given in the order
// records first arrive, so a store's new entries come in key order.
func HistNumKey(num uint64, seq int64, vseq uint64) []byte {
	return AppendHistNumKey(make([]byte, 0, 1+9+8+binary.MaxVarintLen64), num, seq, vseq)
}

// AppendHistNumKey appends HistNumKey(num, seq, vseq) to dst.
func AppendHistNumKey(dst []byte, num uint64, seq int64, vseq uint64) []byte {
	k := AppendRecNum(append(dst, HistNum), num)
	k = binary.BigEndian.AppendUint64(k, uint64(1<<53-1-seq))
	return binary.AppendUvarint(k, vseq)
}

// HistEntry is a history key read by HistoryEntry.
type HistEntry struct {
	Num    uint64 // the record's number, for a key of 'H' (Rec nil) …
	Rec    []byte // … else space tag ‖ key ‖ 0x00
	Seq    int64
	ByVseq bool         // the key names the version by vseq (layout 15 on)
	Vseq   uint64       // when ByVseq
	ID     string       // else the id's text …
	D      canonical.ID // … and the digest it names
}

// HistoryEntry reads a key of the 'h' table that is no head (IsHead): the
// record, the seq and the version, by vseq (a uvarint in its shortest
// form, never 0: a history key never ends in 0x00, as a head's does) or,
// as layouts before 15 wrote it, by the 53 characters of its id. ok is
// false on a key of neither form: the one place a history key is read.
//
// A key of 'H' (HistNumKey) reads the same, the record named by its
// number: always by vseq.
func HistoryEntry(k []byte) (e HistEntry, ok bool) {
	var end int
	switch {
	case len(k) > 0 && k[0] == HistNum:
		var n int
		if e.Num, n = ReadRecNum(k[1:]); n == 0 {
			return e, false
		}
		end = 1 + n
	case len(k) >= 1+SpaceLen+1+8+1 && k[0] == History:
		end = bytes.IndexByte(k[1+SpaceLen:], 0) // a record key holds no 0x00
		if end < 0 {
			return e, false
		}
		end += 1 + SpaceLen + 1
		e.Rec = k[1:end]
	default:
		return e, false
	}
	if len(k) < end+8+1 {
		return e, false
	}
	order := binary.BigEndian.Uint64(k[end:])
	if order > 1<<53-1 {
		return e, false
	}
	e.Seq = int64(1<<53 - 1 - order)
	tail := k[end+8:]
	if len(tail) == canonical.IDLen && e.Rec != nil {
		e.ID = string(tail)
		e.D, ok = canonical.ParseExactID(e.ID)
		return e, ok
	}
	v, n := ShortUvarint(tail)
	if n != len(tail) || v == 0 {
		return e, false
	}
	e.ByVseq, e.Vseq = true, v
	return e, true
}

// SpaceKey is 'S' space.
func SpaceKey(space string) []byte {
	t := SpaceTag(space)
	return append([]byte{Space}, t[:]...)
}

// OrderPrefix is 'o' space.
func OrderPrefix(space string) []byte {
	t := SpaceTag(space)
	return append([]byte{Order}, t[:]...)
}

// OrderKey is 'o' space millis digest.
func OrderKey(space string, millis uint64, d canonical.ID) []byte {
	return AppendOrderKey(make([]byte, 0, 1+SpaceLen+8+32), space, millis, d)
}

// AppendOrderKey appends OrderKey(space, millis, d) to dst.
func AppendOrderKey(dst []byte, space string, millis uint64, d canonical.ID) []byte {
	return AppendOrderKeyTag(dst, SpaceTag(space), millis, d)
}

// AppendOrderKeyTag is AppendOrderKey for the space tagged t (SpaceTag).
func AppendOrderKeyTag(dst []byte, t [SpaceLen]byte, millis uint64, d canonical.ID) []byte {
	k := append(append(dst, Order), t[:]...)
	k = binary.BigEndian.AppendUint64(k, millis)
	return append(k, d[:]...)
}

// LinePlace is 'l' space line n: the ids at one place in a line.
func LinePlace(space, author, collection string, n int64) []byte {
	return AppendLinePlace(make([]byte, 0, 1+SpaceLen+32+8+32), space, author, collection, n)
}

// AppendLinePlace appends LinePlace(space, author, collection, n) to dst.
func AppendLinePlace(dst []byte, space, author, collection string, n int64) []byte {
	return AppendLinePlaceTag(dst, SpaceTag(space), author, collection, n)
}

// AppendLinePlaceTag is AppendLinePlace for the space tagged t (SpaceTag).
func AppendLinePlaceTag(dst []byte, t [SpaceLen]byte, author, collection string, n int64) []byte {
	l := LineTag(author, collection)
	k := append(dst, Line)
	k = append(k, t[:]...)
	k = append(k, l[:]...)
	return binary.BigEndian.AppendUint64(k, uint64(n))
}

// LinePlaces is LinePlace for each of ns in one line, its tags made once.
func LinePlaces(space, author, collection string, ns []int64) [][]byte {
	t := SpaceTag(space)
	l := LineTag(author, collection)
	n := 1 + SpaceLen + 32 + 8
	buf := make([]byte, 0, n*len(ns))
	out := make([][]byte, len(ns))
	for i, p := range ns {
		buf = append(buf, Line)
		buf = append(buf, t[:]...)
		buf = append(buf, l[:]...)
		buf = binary.BigEndian.AppendUint64(buf, uint64(p))
		out[i] = buf[len(buf)-n : len(buf) : len(buf)]
	}
	return out
}

// PlaceValue is the value of an 'l' entry naming its versions by vseq:
// their uvarints one after the other, and when that is a multiple of 32
// bytes long, a 0 byte after them (vseq 0 names no version), so that no
// such value is as long as a list of digests, the form stores of layouts
// before 13 keep.
func PlaceValue(vseqs []uint64) []byte {
	b := make([]byte, 0, 3*len(vseqs)+1)
	for _, v := range vseqs {
		b = binary.AppendUvarint(b, v)
	}
	if len(b)%32 == 0 {
		b = append(b, 0)
	}
	return b
}

// ReadPlace reads an 'l' entry's value: the vseqs it names (byVseq true)
// or, a value as layouts before 13 wrote it (a whole number of 32-byte
// digests), its digests. ok is false on a value of neither form: empty,
// a uvarint not in its shortest form or cut short, a vseq 0 anywhere but
// as the one padding byte PlaceValue adds.
func ReadPlace(b []byte) (vseqs []uint64, ds []canonical.ID, byVseq, ok bool) {
	if len(b) == 0 {
		return nil, nil, false, false
	}
	if len(b)%32 == 0 {
		ds = make([]canonical.ID, len(b)/32)
		for i := range ds {
			copy(ds[i][:], b[i*32:])
		}
		return nil, ds, false, true
	}
	if len(b)%32 == 1 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
		if len(b) == 0 {
			return nil, nil, false, false
		}
	}
	for len(b) > 0 {
		v, n := ShortUvarint(b)
		if n == 0 || v == 0 {
			return nil, nil, false, false
		}
		vseqs = append(vseqs, v)
		b = b[n:]
	}
	return vseqs, nil, true, true
}

// ShortUvarint reads a uvarint from the start of b, as binary.Uvarint
// does, and refuses (n 0) one not in its shortest form: a vseq naming a
// version is written one way only, so a value or key read back compares
// and sorts as written, and any other form is damage.
func ShortUvarint(b []byte) (v uint64, n int) {
	v, n = binary.Uvarint(b)
	if n <= 0 {
		return 0, 0
	}
	short := 1
	for x := v; x >= 0x80; x >>= 7 {
		short++
	}
	if n != short {
		return 0, 0
	}
	return v, n
}

// LogPrevKey is 'L' awaited.
func LogPrevKey(awaited canonical.ID) []byte { return withDigest(LogPrev, awaited) }

// ProofKey is 'x' space a b.
func ProofKey(space string, a, b canonical.ID) []byte {
	t := SpaceTag(space)
	k := append([]byte{Proof}, t[:]...)
	k = append(k, a[:]...)
	return append(k, b[:]...)
}

// RootPrefix is 'a' space root: the held versions of one root in a space.
// A root is any text (a DID), hashed to 32 bytes.
func RootPrefix(space, root string) []byte {
	return appendRootPrefix(make([]byte, 0, RootPrefixLen+32), space, root)
}

func appendRootPrefix(dst []byte, space, root string) []byte {
	return appendRootPrefixTag(dst, SpaceTag(space), root)
}

func appendRootPrefixTag(dst []byte, t [SpaceLen]byte, root string) []byte {
	var buf [160]byte // the text hashed, on the stack when it fits
	r := sha256.Sum256(append(append(buf[:0], "minca/engine/root|"...), root...))
	k := append(dst, Root)
	k = append(k, t[:]...)
	return append(k, r[:]...)
}

// RootPrefixLen is the length of a RootPrefix.
const RootPrefixLen = 1 + SpaceLen + 32

// RootKey is 'a' space root vseq, vseq a uvarint: the version is named by
// where its value is, not by its 32-byte digest, as nothing that reads
// the entry needs the digest before the value.
func RootKey(space, root string, vseq uint64) []byte {
	return binary.AppendUvarint(RootPrefix(space, root), vseq)
}

// AppendRootKeyTag appends RootKey(space, root, vseq) to dst, for the
// space tagged t (SpaceTag).
func AppendRootKeyTag(dst []byte, t [SpaceLen]byte, root string, vseq uint64) []byte {
	return binary.AppendUvarint(appendRootPrefixTag(dst, t, root), vseq)
}

// RootDigestKey is 'a' space root digest, an entry as stores of layouts
// before 12 keep it.
func RootDigestKey(space, root string, d canonical.ID) []byte {
	return append(RootPrefix(space, root), d[:]...)
}

// RootEntry reads the version an 'a' key names: its vseq (byVseq true),
// or, in a key as layouts before 12 wrote it, its digest. ok is false on
// a key of neither form. The two never read alike: a uvarint is at most
// 10 bytes, a digest 32.
func RootEntry(k []byte) (vseq uint64, d canonical.ID, byVseq, ok bool) {
	if len(k) < RootPrefixLen {
		return 0, d, false, false
	}
	rest := k[RootPrefixLen:]
	if len(rest) == 32 {
		copy(d[:], rest)
		return 0, d, false, true
	}
	vseq, n := ShortUvarint(rest)
	if n == 0 || n != len(rest) {
		return 0, d, false, false // not one uvarint, or not its shortest form
	}
	return vseq, d, true, true
}

// ProofPrefix is 'x' space.
func ProofPrefix(space string) []byte {
	t := SpaceTag(space)
	return append([]byte{Proof}, t[:]...)
}

// ChangeKey is 'g' seq: the entry of the batch whose last change is seq.
func ChangeKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{Change}, seq)
}

// WaitForKey is 'W' awaited digest.
func WaitForKey(awaited, d canonical.ID) []byte {
	k := withDigest(WaitFor, awaited)
	return append(k, d[:]...)
}

// WaitQueueKey is 'q' seq digest.
func WaitQueueKey(seq uint64, d canonical.ID) []byte {
	k := binary.BigEndian.AppendUint64([]byte{WaitQueue}, seq)
	return append(k, d[:]...)
}

// SourceTag names a source of waiting versions (Admit's from), hashed to
// 32 bytes.
func SourceTag(from string) [32]byte {
	return sha256.Sum256([]byte("minca/engine/source|" + from))
}

// WaitFromPrefix is 'Q' source: one source's waiting versions.
func WaitFromPrefix(source [32]byte) []byte {
	return append([]byte{WaitFrom}, source[:]...)
}

// WaitFromKey is 'Q' source seq digest.
func WaitFromKey(source [32]byte, seq uint64, d canonical.ID) []byte {
	k := make([]byte, 0, 1+32+8+32)
	k = append(k, WaitFrom)
	k = append(k, source[:]...)
	k = binary.BigEndian.AppendUint64(k, seq)
	return append(k, d[:]...)
}

// MetaKey is 'm' name.
func MetaKey(name string) []byte { return append([]byte{Meta}, name...) }

// IndexKey is 'i' key.
func IndexKey(k []byte) []byte { return append([]byte{Index}, k...) }

// AppendIndexKey appends IndexKey(k) to dst.
func AppendIndexKey(dst, k []byte) []byte { return append(append(dst, Index), k...) }

// InternalKey is '_' name.
func InternalKey(name string) []byte { return append([]byte{Internal}, name...) }

// PrefixEnd is the first key after every key with the prefix p, or nil when
// there is none (p all 0xff).
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// Digest reads a 32-byte digest from b at off.
func Digest(b []byte, off int) (canonical.ID, bool) {
	var d canonical.ID
	if len(b) < off+32 {
		return d, false
	}
	copy(d[:], b[off:off+32])
	return d, true
}
