package record

import (
	"fmt"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// Draft is a version as its writer decides it, before it is signed: every
// member of 02 §3.1 a writer chooses, typed. Signing it ([Draft.Sign],
// [Draft.Presign]) adds what the signer and the body decide (author,
// proof, bodyHash, id and signature, §3.3) and gives the version. It is
// what every builder of a signed version uses, so that the members a
// writer sets, and when each is absent (§3.1: "absent when they do not
// apply — never null, never false, never an empty list"), are decided in
// one place.
type Draft struct {
	// Space is the space the version is in; "" for a loose version (§3.5),
	// which carries no log.
	Space      string
	Collection string
	CreatedAt  time.Time
	// Key is the record's key (§4.1).
	Key string
	// After is the version this one follows, the one its writer holds as
	// current, a delete included (§4.2): seq, prev and genesis are derived
	// from it. Nil for a record's first version (seq 0).
	After *Version
	// Log is the version's place in its writer's line (§4.10), written on
	// every version in a space.
	Log Log
	// Seen are the ids of the latest access changes the writer knew of
	// (03 §3.2); none leaves seen out.
	Seen   []string
	Retain bool
	// Deleted makes a delete (§4.4): it carries no body, links, files or
	// tags, whatever those fields hold.
	Deleted bool
	// Body is the body in canonical's value model (nil is JSON null); a
	// private space's is the sealed one.
	Body  any
	Links []Link
	Files []File
	Tags  []string
}

// LogAfter is the place after last in a writer's line (02 §4.10): one on
// from last's, naming it; the line's first place when last is nil.
func LogAfter(last *Version) Log {
	if last == nil || last.Log == nil {
		return Log{}
	}
	return Log{N: last.Log.N + 1, Prev: last.ID}
}

// Object is the draft as an unsigned version: the members of 02 §3.1 it
// sets, each absent where it does not apply. The object is new; a caller
// may change it before signing it with [Sign].
func (d *Draft) Object() *canonical.Object {
	o := &canonical.Object{Members: make([]canonical.Member, 0, 16)}
	if d.Space != "" {
		o.Set("space", d.Space)
	}
	o.Set("collection", d.Collection)
	o.Set("createdAt", FormatTime(d.CreatedAt))
	o.Set("key", d.Key)
	if d.After != nil {
		next := NextAfter(d.After)
		o.Set("seq", float64(next.Seq))
		o.Set("prev", next.Prev)
		o.Set("genesis", next.Genesis)
	} else {
		o.Set("seq", float64(0))
	}
	if d.Space != "" {
		o.Set("log", d.Log.value())
	}
	if len(d.Seen) > 0 {
		o.Set("seen", anyList(d.Seen))
	}
	if d.Retain {
		o.Set("retain", true)
	}
	if d.Deleted {
		o.Set("deleted", true)
		return o
	}
	o.Set("body", d.Body)
	if len(d.Links) > 0 {
		o.Set("links", LinksValue(d.Links))
	}
	if len(d.Files) > 0 {
		fs := make([]any, len(d.Files))
		for i, f := range d.Files {
			fs[i] = f.value()
		}
		o.Set("files", fs)
	}
	if len(d.Tags) > 0 {
		o.Set("tags", anyList(d.Tags))
	}
	return o
}

// Presign is [Presign] of the draft: the version's id is fixed, its
// signature not yet made.
func (d *Draft) Presign(s identity.Signer) (*Presigned, error) {
	return presign(d.Object(), s) // the object is the draft's own: no copy
}

// Unplaced is a draft made ready to presign but for its log place (02
// §4.10): its members built, author, proof and bodyHash set (§3.3). A
// writer makes it before it takes the place, so that the lock it takes
// places under is held for the place, the signed part and its id alone.
type Unplaced struct {
	obj   *canonical.Object
	s     identity.Signer
	space bool
}

// Unplaced is the draft, but for its Log, made ready to presign with s.
func (d *Draft) Unplaced(s identity.Signer) (*Unplaced, error) {
	o := d.Object()
	if err := presignMembers(o, s); err != nil {
		return nil, err
	}
	return &Unplaced{obj: o, s: s, space: d.Space != ""}, nil
}

// Signer is the signer the draft was made ready for: author and proof
// are its.
func (u *Unplaced) Signer() identity.Signer { return u.s }

// At is the version at place l, presigned: what [Draft.Presign] gives
// for the draft with Log l. It is called once: the Presigned shares the
// draft's members.
func (u *Unplaced) At(l Log) (*Presigned, error) {
	o := u.obj
	if o == nil {
		return nil, fmt.Errorf("minca/record: sign: an unplaced draft presigned twice")
	}
	u.obj = nil
	if u.space {
		o.Set("log", l.value())
	}
	return presignPart(o, u.s)
}

// Sign signs the draft as 02 §3.3 says and gives the version; what peers
// would refuse (§4.6) is refused here.
func (d *Draft) Sign(s identity.Signer) (*Version, error) {
	p, err := d.Presign(s)
	if err != nil {
		return nil, err
	}
	return p.Sign()
}

// value is the log member (02 §3.1): {n, prev}, prev left out where it
// is "" (a line's first place).
func (l Log) value() *canonical.Object {
	if l.Prev == "" {
		return canonical.NewObject("n", float64(l.N))
	}
	return canonical.NewObject("n", float64(l.N), "prev", l.Prev)
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
