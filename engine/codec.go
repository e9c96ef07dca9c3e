package engine

import (
	"encoding/binary"
	"slices"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// An envelope value is uvarint(splice) ‖ the canonical JSON of the version
// without its body. splice is where "body":… goes in the canonical JSON of
// the whole version (members sort by name, 02 §1), so a whole version is
// two stored values joined, with no parsing, and demotion deletes the body
// value without rewriting the envelope.

// encodeEnvelope returns the envelope value of v and the body value (nil
// when v has no body).
func encodeEnvelope(v *record.Version) (env, body []byte, err error) {
	o := v.Object()
	// The members before "body" and those after, each encoded once.
	env = binary.AppendUvarint(make([]byte, 0, 1280), 0) // a signed version's envelope is 0.8–1.1 KB
	head := len(env)
	env, err = canonical.AppendObjectExcept(env, o, func(n string) bool {
		return n == "body" || canonical.CompareUTF16(n, "body") > 0
	})
	if err != nil {
		return nil, nil, err
	}
	splice := len(env) - head - 1 // the closing brace of the members before "body"
	rest := len(env)
	env, err = canonical.AppendObjectExcept(env, o, func(n string) bool {
		return n == "body" || canonical.CompareUTF16(n, "body") < 0
	})
	if err != nil {
		return nil, nil, err
	}
	switch {
	case len(env)-rest == 2: // nothing after "body": drop the empty {}
		env = env[:rest]
	case splice == 1: // nothing before: {} then {…}
		env = append(env[:rest-2], env[rest:]...)
	default: // {…} and {…} make {…,…}
		env[rest-1] = ','
		env = append(env[:rest], env[rest+1:]...)
	}
	// The splice point goes first, in a uvarint that may be longer than
	// the one reserved.
	if n := binary.PutUvarint(make([]byte, binary.MaxVarintLen64), uint64(splice)); n != head {
		env = append(binary.AppendUvarint(make([]byte, 0, len(env)+n), uint64(splice)), env[head:]...)
	} else {
		binary.PutUvarint(env, uint64(splice))
	}
	if v.HasBody {
		body, err = canonical.Marshal(v.Body)
		if err != nil {
			return nil, nil, err
		}
	}
	return env, body, nil
}

// stubBytes returns the canonical JSON of the stored envelope.
func stubBytes(env []byte) ([]byte, int, error) {
	splice, n := binary.Uvarint(env)
	// Compared as uint64: a splice past int's range is no negative index.
	if n <= 0 || len(env) <= n || splice < 1 || splice > uint64(len(env)-n-1) {
		return nil, 0, Errorf(ErrCorrupt, "damaged: envelope header")
	}
	return env[n:], int(splice), nil
}

// joinWhole returns the canonical JSON of the version: the envelope with
// "body":body spliced in, or the envelope alone when body is nil.
func joinWhole(env, body []byte) ([]byte, error) {
	return appendWhole(nil, env, body)
}

// appendWhole is joinWhole appending to dst: a reader of many versions
// joins them into one buffer it uses again, not an allocation each.
func appendWhole(dst, env, body []byte) ([]byte, error) {
	stub, splice, err := stubBytes(env)
	if err != nil {
		return nil, err
	}
	if body == nil {
		return append(dst, stub...), nil
	}
	dst = slices.Grow(dst, len(stub)+len(body)+8)
	dst = append(dst, stub[:splice]...)
	if splice == 1 {
		dst = append(dst, `"body":`...)
		dst = append(dst, body...)
		if stub[1] != '}' {
			dst = append(dst, ',')
		}
	} else {
		dst = append(dst, `,"body":`...)
		dst = append(dst, body...)
	}
	return append(dst, stub[splice:]...), nil
}

// decodeHeld reads a held version from its stored values (body nil for a
// stub). A stub of a retained version cannot pass record.Decode (02 §4.6
// #10 refuses one arriving), yet the engine reads envelopes alone when it
// judges; such an envelope is read with a placeholder body and returned as
// a stub.
func decodeHeld(env, body []byte) (*record.Version, error) {
	whole, err := joinWhole(env, body)
	if err != nil {
		return nil, err
	}
	val, err := canonical.Parse(whole)
	if err != nil {
		return nil, Errorf(ErrCorrupt, "damaged: stored version: %v", err)
	}
	o, ok := val.(*canonical.Object)
	if !ok {
		return nil, Errorf(ErrCorrupt, "damaged: stored version is not an object")
	}
	placeholder := false
	if body == nil {
		r, _ := o.Get("retain")
		d, _ := o.Get("deleted")
		if r == true && d != true {
			o.Members = append(o.Members, canonical.Member{Name: "body", Value: nil})
			placeholder = true
		}
	}
	v, err := record.FromValue(o)
	if err != nil {
		return nil, Errorf(ErrCorrupt, "damaged: stored version: %v", err)
	}
	if placeholder {
		v = v.Stub()
	}
	return v, nil
}

// encoded is what storing a version needs made from it, made ahead on
// every core ([Store.Prepare]) when it arrives in an Admit batch.
type encoded struct {
	ok  bool         // the id is a content id in its canonical text
	d   canonical.ID // its digest
	rec []byte       // keys.Rec of its record; nil without a space
	env []byte       // the envelope value; nil until encoded
	// body is the body value; nil when the version has none.
	body []byte
	// tag is its space's keys.SpaceTag, made once for every key of the
	// space the version is stored under (the id is parsed to make it).
	tag [keys.SpaceLen]byte
}

// encode makes what storing v needs.
func encode(v *record.Version) (encoded, error) {
	var e encoded
	e.d, e.ok = v.Digest()
	if !e.ok || !v.HasSpace {
		return e, nil
	}
	e.tag = keys.SpaceTag(v.Space)
	e.rec = keys.AppendRec(make([]byte, 0, keys.RecLen(v.Key)), e.tag, v.Key)
	var err error
	e.env, e.body, err = encodeEnvelope(v)
	return e, err
}

// A version's value ('v'): uvarint(len(env)) ‖ env ‖ body, the body
// absent for a stub. Demoting rewrites it without the body.
func versionValue(env, body []byte) []byte {
	b := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(env)+len(body)), uint64(len(env)))
	b = append(b, env...)
	return append(b, body...)
}

// splitVersion reads a version's value: its envelope value and its body
// (nil for a stub). They share b's memory.
func splitVersion(b []byte) (env, body []byte, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, Errorf(ErrCorrupt, "damaged: version value")
	}
	env = b[k : k+int(n)]
	if rest := b[k+int(n):]; len(rest) > 0 {
		body = rest
	}
	return env, body, nil
}

// An 'e' value is the version's vseq, 8 bytes.
func vseqValue(vseq uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), vseq) }

func decodeVseq(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, Errorf(ErrCorrupt, "damaged: id entry of %d bytes", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// History entry ('h' rec order) and head ('h' rec) values.

// histEntry is a held version's entry in its record's history: its
// standing and what it is. Whether it is whole is whether its body is
// held (a delete always is), so demoting it rewrites nothing here.
type histEntry struct {
	verdict Verdict // Stands or Withdrawn
	retain  bool
	deleted bool
}

func (h histEntry) encode() []byte {
	var f byte
	if h.retain {
		f |= 2
	}
	if h.deleted {
		f |= 4
	}
	return []byte{byte(h.verdict), f}
}

func decodeHist(b []byte) (histEntry, error) {
	if len(b) != 2 || (Verdict(b[0]) != Stands && Verdict(b[0]) != Withdrawn) || b[1]&^6 != 0 {
		return histEntry{}, Errorf(ErrCorrupt, "damaged: history entry")
	}
	return histEntry{verdict: Verdict(b[0]), retain: b[1]&2 != 0, deleted: b[1]&4 != 0}, nil
}

// holding is how a version is held, as a record's head keeps it for its
// top and first versions, so that demoting either reads nothing.
type holding struct {
	whole   bool
	retain  bool
	deleted bool
	bodyLen int // bytes of the stored body, when whole
}

// head is a record's current-version index: the top version (the one no
// other supersedes, 02 §4.3) and the first that stands in §4.3 order, which
// is what reads as the record when it is whole (§9.5).
type head struct {
	topSeq   int64
	top      canonical.ID
	topV     uint64 // top's vseq
	topH     holding
	hasFirst bool
	firstSeq int64
	first    canonical.ID
	firstV   uint64 // first's vseq
	firstH   holding
	// firstEnv and firstBody are the stored envelope and body (nil when
	// not whole, or none) of first: read from the head when inHead (a
	// head as layouts 11 to 15 wrote it, the only home of first's value,
	// whose 'v' holds a marker), else set in memory by the batch that
	// made first the first, or nil (first's value is at 'c' firstV, since
	// layout 16: current_home.go).
	firstEnv  []byte
	firstBody []byte
	inHead    bool
	// num is the record's number, under which its history entries are
	// ('H' num …, layout 18 on); 0 for a record whose head a layout
	// before 18 wrote, its entries under its key ('h' rec …).
	num uint64
}

// equal reports whether h and o name the same versions held the same
// way: what a head writes. The first's envelope and body are not compared
// (its vseq and holding say which value and how it is held), so a head
// as layouts 11 to 15 wrote it is not written again while they stay.
func (h head) equal(o head) bool {
	return h.topSeq == o.topSeq && h.top == o.top && h.topV == o.topV && h.topH == o.topH && h.hasFirst == o.hasFirst &&
		h.firstV == o.firstV && h.firstH == o.firstH && h.firstSeq == o.firstSeq && h.first == o.first && h.num == o.num
}

// Head flags.
const (
	hasFirst     = 1 << iota
	firstWhole   // the first that stands is whole
	firstRetain  // … is retained
	firstDeleted // … is a delete
	topWhole
	topRetain
	topDeleted
	numbered // the record's number follows the ids (layout 18 on)
)

func (h head) encode() []byte {
	// The head names its first version's value (at 'c' firstV) and never
	// holds it (layout 16): what is written ends with first's body length.
	b := make([]byte, 0, 1+8+32+8+32+5*binary.MaxVarintLen64)
	var f byte
	for _, x := range []struct {
		on  bool
		bit byte
	}{{h.hasFirst, hasFirst}, {h.firstH.whole, firstWhole}, {h.firstH.retain, firstRetain}, {h.firstH.deleted, firstDeleted},
		{h.topH.whole, topWhole}, {h.topH.retain, topRetain}, {h.topH.deleted, topDeleted}, {h.num != 0, numbered}} {
		if x.on {
			f |= x.bit
		}
	}
	b = append(b, f)
	b = binary.BigEndian.AppendUint64(b, uint64(h.topSeq))
	b = append(b, h.top[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(h.firstSeq))
	b = append(b, h.first[:]...)
	if h.num != 0 {
		b = binary.AppendUvarint(b, h.num)
	}
	b = binary.AppendUvarint(b, uint64(h.topH.bodyLen))
	b = binary.AppendUvarint(b, h.topV)
	b = binary.AppendUvarint(b, h.firstV)
	if !h.hasFirst {
		return b
	}
	return binary.AppendUvarint(b, uint64(h.firstH.bodyLen))
}

// errBadHead is made once: reads decode a head at every look-up.
var errBadHead = Errorf(ErrCorrupt, "damaged: record head")

func decodeHead(b []byte) (head, error) {
	var h head
	if len(b) < 1+8+32+8+32+1 {
		return h, errBadHead
	}
	f := b[0]
	h.hasFirst = f&hasFirst != 0
	h.firstH = holding{whole: f&firstWhole != 0, retain: f&firstRetain != 0, deleted: f&firstDeleted != 0}
	h.topH = holding{whole: f&topWhole != 0, retain: f&topRetain != 0, deleted: f&topDeleted != 0}
	h.topSeq = int64(binary.BigEndian.Uint64(b[1:]))
	copy(h.top[:], b[9:41])
	h.firstSeq = int64(binary.BigEndian.Uint64(b[41:]))
	copy(h.first[:], b[49:81])
	rest := b[81:]
	if f&numbered != 0 {
		// Layout 18 on: the record's number, never 0.
		num, k := binary.Uvarint(rest)
		if k <= 0 || num == 0 {
			return h, errBadHead
		}
		h.num, rest = num, rest[k:]
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > 1<<40 {
		return h, errBadHead
	}
	h.topH.bodyLen, rest = int(n), rest[k:]
	for _, p := range []*uint64{&h.topV, &h.firstV} {
		if *p, k = binary.Uvarint(rest); k <= 0 {
			return h, errBadHead
		}
		rest = rest[k:]
	}
	if !h.hasFirst {
		if len(rest) != 0 {
			return h, errBadHead
		}
		return h, nil
	}
	n, k = binary.Uvarint(rest)
	if k > 0 && k == len(rest) && n <= 1<<40 {
		// Layout 16 on: the first's body length, its value at 'c' firstV.
		h.firstH.bodyLen = int(n)
		return h, nil
	}
	// Layouts 11 to 15: the first's envelope (never empty) and body,
	// whose 'v' holds a marker.
	if k <= 0 || len(rest) < k+1 || n > uint64(len(rest)-k-1) {
		return h, errBadHead
	}
	h.inHead = true
	h.firstEnv = rest[k : k+int(n)]
	rest = rest[k+int(n):]
	if rest[0] == 1 {
		h.firstBody = rest[1:]
		h.firstH.bodyLen = len(h.firstBody)
	} else if rest[0] != 0 || len(rest) != 1 {
		return h, errBadHead
	}
	return h, nil
}
