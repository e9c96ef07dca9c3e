package record

import (
	"math"
	"strconv"

	"github.com/minca-go/minca/canonical"
)

// Version is one signed state of a record (02 §3.1), as received. It keeps
// every member it was given, known or not, so the signed part (everything
// but id, signature and body, §3.2) re-hashes to its id. The typed fields
// are read from those members by [Decode] and never disagree with them.
type Version struct {
	obj *canonical.Object
	// The digests the id, prev, genesis, log.prev and seen name, read once
	// with the members (ok: the text is an id in its canonical text; bit i
	// of seenOK for seen[i]).
	digest, prev, genesis, logPrev         canonical.ID
	digestOK, prevOK, genesisOK, logPrevOK bool
	seen                                   []canonical.ID
	seenOK                                 uint64

	ID         string
	Author     string
	Collection string
	CreatedAt  string
	Key        string
	Signature  string
	Seq        int64

	HasSpace bool // space is present (false for a loose version, §3.5)
	Space    string

	Prev    string // present exactly when Seq > 0 (§4.6 #3, #4)
	Genesis string

	Log  *Log     // nil when absent
	Seen []string // nil when absent

	Deleted bool
	Retain  bool

	BodyHash string // "" on a delete
	HasBody  bool   // false on a stub, and on a delete that omits its body
	Body     any    // the body, in canonical's value model

	HasLinks bool
	Links    []Link

	HasTags bool
	Tags    []string

	// Files are the well-formed entries of files ([FilesOf]): nil when
	// absent or when none is.
	Files []File

	Proof *canonical.Object // the note in proof, nil when absent

	HasTo bool // to is present (loose versions only, §3.5)
	To    string
}

// Log is a version's place in its writer's line (02 §4.10).
type Log struct {
	N    int64
	Prev string // "" at N == 0
}

// withSignature is v with sig as its signature: a new Version and envelope
// sharing v's values, the members not read again (no shape check reads a
// signature's text: a verifier does).
func (v *Version) withSignature(sig string) *Version {
	out := *v
	ms := make([]canonical.Member, len(v.obj.Members))
	copy(ms, v.obj.Members)
	for i := range ms {
		if ms[i].Name == "signature" {
			ms[i].Value = sig
		}
	}
	out.obj = &canonical.Object{Members: ms}
	out.Signature = sig
	return &out
}

// Decode reads a version from JSON and checks its shape: the members §3.1
// requires, with their types, and every check of §4.6 but the body hash
// (#9), which [Verifier.Verify] makes. A refusal is a [*Refusal]; input
// that is not JSON is a [*canonical.Error].
func Decode(data []byte) (*Version, error) {
	v, err := canonical.Parse(data)
	if err != nil {
		return nil, err
	}
	return FromValue(v)
}

// FromValue is [Decode] for a value already read. The version keeps o (or
// the object v is) and must be its only user from then on.
func FromValue(v any) (*Version, error) { return fromValue(v, false) }

// QuotedFromValue is [FromValue] for a version's envelope quoted inside
// another version — a stub in a fork proof (02 §4.10: "either may be a
// stub") — rather than travelling itself: every check of §4.6 but #10,
// which refuses a retained version arriving as a stub (§4.5: "a retained
// version travels whole"). A fork in a line whose versions are retained
// (the access history, history "all") is proven by their stubs as any
// other.
func QuotedFromValue(v any) (*Version, error) { return fromValue(v, true) }

func fromValue(v any, quoted bool) (*Version, error) {
	o, ok := v.(*canonical.Object)
	if !ok {
		return nil, refuse(CodeNotObject, "", "a version is a JSON object")
	}
	ver := &Version{obj: o}
	if err := ver.read(); err != nil {
		return nil, err
	}
	if err := ver.checkShape(quoted); err != nil {
		return nil, err
	}
	return ver, nil
}

// read fills the typed fields from the members, refusing a known member of
// the wrong type.
func (v *Version) read() error {
	var haveID, haveAuthor, haveCollection, haveCreated, haveKey, haveSig, haveSeq bool
	for _, m := range v.obj.Members {
		switch m.Name {
		case "id":
			if v.ID, haveID = m.Value.(string); haveID {
				v.digest, v.digestOK = canonical.ParseExactID(v.ID)
			}
		case "author":
			v.Author, haveAuthor = m.Value.(string)
		case "collection":
			v.Collection, haveCollection = m.Value.(string)
		case "createdAt":
			v.CreatedAt, haveCreated = m.Value.(string)
		case "key":
			s, ok := m.Value.(string)
			if !ok || !validKey(s) {
				return refuse(CodeKey, "key", "key must be a string of 1–128 characters of [a-z0-9:._-] (02 §4.1, §4.6 #1)")
			}
			v.Key, haveKey = s, true
		case "signature":
			v.Signature, haveSig = m.Value.(string)
		case "seq":
			n, ok := safeInteger(m.Value)
			if !ok {
				return refuse(CodeSeq, "seq", "seq must be an integer, 0 ≤ seq ≤ 2^53 − 1 (02 §4.6 #2)")
			}
			v.Seq, haveSeq = n, true
		case "space":
			s, ok := m.Value.(string)
			if !ok {
				return refuse(CodeMember, "space", "space must be a string (02 §3.1)")
			}
			v.Space, v.HasSpace = s, true
		case "prev":
			s, ok := m.Value.(string)
			if !ok {
				return refuse(CodeLater, "prev", "prev must be a string (02 §4.6 #4)")
			}
			v.Prev = s
			v.prev, v.prevOK = canonical.ParseExactID(s)
		case "genesis":
			s, ok := m.Value.(string)
			if !ok {
				return refuse(CodeLater, "genesis", "genesis must be a string (02 §4.6 #4)")
			}
			v.Genesis = s
			v.genesis, v.genesisOK = canonical.ParseExactID(s)
		case "log":
			l, err := readLog(m.Value)
			if err != nil {
				return err
			}
			v.Log = l
			if l.Prev != "" {
				v.logPrev, v.logPrevOK = canonical.ParseExactID(l.Prev)
			}
		case "seen":
			s, err := readSeen(m.Value)
			if err != nil {
				return err
			}
			v.Seen = s
			v.seen, v.seenOK = make([]canonical.ID, len(s)), 0
			for i, id := range s {
				var ok bool
				if v.seen[i], ok = canonical.ParseExactID(id); ok {
					v.seenOK |= 1 << i
				}
			}
		case "deleted":
			if m.Value != true {
				return refuse(CodeFlag, "deleted", "deleted, if present, must be true (02 §4.6 #6)")
			}
			v.Deleted = true
		case "retain":
			if m.Value != true {
				return refuse(CodeFlag, "retain", "retain, if present, must be true (02 §4.6 #6)")
			}
			v.Retain = true
		case "bodyHash":
			s, ok := m.Value.(string)
			if !ok {
				return refuse(CodeBodyHash, "bodyHash", "bodyHash must be a string of 1–128 characters (02 §4.6 #7)")
			}
			v.BodyHash = s
		case "body":
			v.HasBody, v.Body = true, m.Value
		case "links":
			l, err := ParseLinks(m.Value)
			if err != nil {
				return err
			}
			v.HasLinks, v.Links = true, l
		case "tags":
			t, err := readTags(m.Value)
			if err != nil {
				return err
			}
			v.HasTags, v.Tags = true, t
		case "files":
			v.Files = FilesOf(m.Value)
		case "proof":
			p, ok := m.Value.(*canonical.Object)
			if !ok {
				return refuse(CodeMember, "proof", "proof must be an object: one note, never a list (02 §3.1)")
			}
			v.Proof = p
		case "to":
			s, ok := m.Value.(string)
			if !ok {
				return refuse(CodeMember, "to", "to must be a string (02 §3.1)")
			}
			v.To, v.HasTo = s, true
		}
	}
	switch {
	case !haveID:
		return refuse(CodeMember, "id", "id must be present, a string (02 §3.1)")
	case !haveAuthor:
		return refuse(CodeMember, "author", "author must be present, a string (02 §3.1)")
	case !haveCollection:
		return refuse(CodeMember, "collection", "collection must be present, a string (02 §3.1)")
	case !haveCreated:
		return refuse(CodeMember, "createdAt", "createdAt must be present, a string (02 §3.1)")
	case !haveKey:
		return refuse(CodeKey, "key", "key must be present (02 §4.6 #1)")
	case !haveSeq:
		return refuse(CodeSeq, "seq", "seq must be present (02 §4.6 #2)")
	case !haveSig:
		return refuse(CodeMember, "signature", "signature must be present, a string (02 §3.1)")
	}
	return nil
}

// checkShape makes the checks of 02 §4.6 that relate members to each other;
// quoted, all but #10 (see QuotedFromValue).
func (v *Version) checkShape(quoted bool) error {
	hasPrev, hasGenesis := v.obj.Has("prev"), v.obj.Has("genesis")
	if v.Seq == 0 {
		if hasPrev || hasGenesis {
			return refuse(CodeFirst, "prev", "a first version (seq 0) has no prev and no genesis (02 §4.6 #3)")
		}
	} else {
		if !hasPrev || !hasGenesis {
			return refuse(CodeLater, "prev", "a later version (seq > 0) names its prev and its genesis (02 §4.6 #4)")
		}
		if v.Prev == v.ID {
			return refuse(CodeLater, "prev", "prev must not be the version's own id (02 §4.6 #4)")
		}
		if v.Genesis == v.ID {
			return refuse(CodeLater, "genesis", "genesis must not be the version's own id (02 §4.6 #4)")
		}
	}
	hasBodyHash := v.obj.Has("bodyHash")
	if v.Deleted {
		if v.HasBody && v.Body != nil {
			return refuse(CodeDelete, "body", "a delete's body is absent or null (02 §4.4, §4.6 #7)")
		}
		if hasBodyHash {
			return refuse(CodeDelete, "bodyHash", "a delete has no bodyHash (02 §4.6 #7)")
		}
	} else if !hasBodyHash || len(v.BodyHash) < 1 || len(v.BodyHash) > MaxBodyHashLen {
		return refuse(CodeBodyHash, "bodyHash", "bodyHash must be a string of 1–128 characters unless the version is a delete (02 §4.6 #7)")
	}
	if v.Retain && !v.HasBody && !v.Deleted && !quoted {
		return refuse(CodeRetainStub, "body", "a retained version travels whole: a stub of one is refused (02 §4.5, §4.6 #10)")
	}
	if v.HasSpace && v.Log == nil {
		return refuse(CodeLog, "log", "a version in a space carries its place in its writer's line, log (02 §4.6 #11)")
	}
	if v.Log != nil && v.Log.N > 0 && v.Log.Prev == v.ID {
		return refuse(CodeLog, "log.prev", "log.prev must not be the version's own id (02 §4.6 #11)")
	}
	return nil
}

func readLog(val any) (*Log, error) {
	o, ok := val.(*canonical.Object)
	if !ok {
		return nil, refuse(CodeLog, "log", "log must be an object {n, prev?} (02 §4.6 #11)")
	}
	l := &Log{}
	hasN, hasPrev := false, false
	for _, m := range o.Members {
		switch m.Name {
		case "n":
			n, ok := safeInteger(m.Value)
			if !ok {
				return nil, refuse(CodeLog, "log.n", "log.n must be an integer, 0 ≤ n ≤ 2^53 − 1 (02 §4.6 #11)")
			}
			l.N, hasN = n, true
		case "prev":
			s, ok := m.Value.(string)
			if !ok || len(s) < 1 || canonical.UTF16Len(s) > MaxLogPrevLen {
				return nil, refuse(CodeLog, "log.prev", "log.prev must be a string of 1–128 characters (02 §4.6 #11)")
			}
			l.Prev, hasPrev = s, true
		default:
			return nil, refuse(CodeLog, "log."+m.Name, "log has no members but n and prev (02 §4.6 #11)")
		}
	}
	if !hasN {
		return nil, refuse(CodeLog, "log.n", "log.n must be present (02 §4.6 #11)")
	}
	if l.N == 0 && hasPrev {
		return nil, refuse(CodeLog, "log.prev", "log.prev is absent at n 0 (02 §4.6 #11)")
	}
	if l.N > 0 && !hasPrev {
		return nil, refuse(CodeLog, "log.prev", "log.prev names the key's version one place before when n > 0 (02 §4.6 #11)")
	}
	return l, nil
}

func readSeen(val any) ([]string, error) {
	arr, ok := val.([]any)
	if !ok || len(arr) > MaxSeen {
		return nil, refuse(CodeSeen, "seen", "seen must be a list of at most 64 strings (02 §4.6 #5)")
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok || len(s) < 1 || canonical.UTF16Len(s) > MaxSeenIDLen {
			return nil, refuse(CodeSeen, "seen["+strconv.Itoa(i)+"]", "each id in seen is a string of 1–128 characters (02 §4.6 #5)")
		}
		out[i] = s
	}
	return out, nil
}

func readTags(val any) ([]string, error) {
	arr, ok := val.([]any)
	if !ok || len(arr) > MaxTags {
		return nil, refuse(CodeTags, "tags", "tags must be a list of at most 64 strings (02 §8.3, §10)")
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, refuse(CodeTags, "tags["+strconv.Itoa(i)+"]", "each tag is a string (02 §8.3)")
		}
		out[i] = s
	}
	return out, nil
}

// safeInteger reads a JSON number that is an integer in 0 … 2^53 − 1.
func safeInteger(val any) (int64, bool) {
	f, ok := val.(float64)
	if !ok || f < 0 || f > MaxSafeInteger || f != math.Trunc(f) {
		return 0, false
	}
	return int64(f), true
}

// Object returns the version's members as received. It must not be changed.
func (v *Version) Object() *canonical.Object { return v.obj }

// Get returns a member by name, known or not.
func (v *Version) Get(name string) (any, bool) { return v.obj.Get(name) }

// IsStub reports whether this is a stub: a version, not a delete, held or
// sent without its body (02 §4.5).
func (v *Version) IsStub() bool { return !v.HasBody && !v.Deleted }

// Stub returns the version without its body: same id, same signature,
// every other member unchanged (02 §4.5). A stub or delete returns itself.
func (v *Version) Stub() *Version {
	if !v.HasBody || v.Deleted {
		return v
	}
	o := v.obj.Clone()
	o.Delete("body")
	s := *v
	s.obj, s.HasBody, s.Body = o, false, nil
	return &s
}

// WithBody returns the whole version for a stub, given a body read from
// elsewhere (a segment, a peer). The caller verifies it as any copy.
func (v *Version) WithBody(body any) *Version {
	o := v.obj.Clone()
	o.Delete("body")
	o.Members = append(o.Members, canonical.Member{Name: "body", Value: body})
	w := *v
	w.obj, w.HasBody, w.Body = o, true, body
	return &w
}

// SignedPart returns the canonical bytes of the signed part: every member
// but id, signature and body (02 §3.2). This one function defines them.
func (v *Version) SignedPart() ([]byte, error) {
	return AppendSignedPart(make([]byte, 0, signedPartCap), v.obj)
}

// AppendSignedPart appends the canonical form of o without id, signature and
// body (02 §3.2).
func AppendSignedPart(dst []byte, o *canonical.Object) ([]byte, error) {
	return canonical.AppendObjectExcept(dst, o, isUnsigned)
}

// signedPartCap is room for a typical signed part (0.6–0.9 KB: DIDs, ids,
// tags), so building it does not grow and copy the buffer.
const signedPartCap = 1024

func isUnsigned(name string) bool {
	return name == "id" || name == "signature" || name == "body"
}

// MarshalJSON writes the whole version, every member, in canonical form.
func (v *Version) MarshalJSON() ([]byte, error) { return canonical.Marshal(v.obj) }

// Digest returns the 32-byte digest the id names, and whether the id is
// one in its canonical text (02 §2). A verified version's id always is
// (§3.3 step 1). It was read with the version: nothing parses it again.
func (v *Version) Digest() (canonical.ID, bool) { return v.digest, v.digestOK }

// LogPrevDigest returns the digest log.prev names, and whether it is an id
// in its canonical text (02 §4.10); false when there is no log.prev.
func (v *Version) LogPrevDigest() (canonical.ID, bool) { return v.logPrev, v.logPrevOK }

// PrevDigest returns the digest prev names, and whether it is an id in its
// canonical text (02 §4.7); false on a first version.
func (v *Version) PrevDigest() (canonical.ID, bool) { return v.prev, v.prevOK }

// GenesisDigest returns the digest genesis names, and whether it is an id
// in its canonical text (02 §4.7); false on a first version.
func (v *Version) GenesisDigest() (canonical.ID, bool) { return v.genesis, v.genesisOK }

// FirstDigest is [Version.FirstID]'s digest: the version's own at seq 0,
// else its genesis's.
func (v *Version) FirstDigest() (canonical.ID, bool) {
	if v.Seq == 0 {
		return v.Digest()
	}
	return v.GenesisDigest()
}

// SeenDigest returns the digest v.Seen[i] names, and whether it is an id in
// its canonical text (02 §3.1).
func (v *Version) SeenDigest(i int) (canonical.ID, bool) {
	if i < 0 || i >= len(v.seen) {
		return canonical.ID{}, false
	}
	return v.seen[i], v.seenOK&(1<<i) != 0
}

// IsFirst reports whether this is a record's first version (seq 0).
func (v *Version) IsFirst() bool { return v.Seq == 0 }

// FirstID is the id of the version's first version, the one its own chain
// names (02 §4.5): itself at seq 0, else its genesis.
func (v *Version) FirstID() string {
	if v.Seq == 0 {
		return v.ID
	}
	return v.Genesis
}
