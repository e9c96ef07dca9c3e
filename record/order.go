package record

import "github.com/minca-go/minca/canonical"

// Supersedes reports whether a supersedes b, two versions of one key:
// a.seq > b.seq, or equal seqs and a's id is lower, comparing id strings
// character by character (02 §4.3). createdAt plays no part.
func Supersedes(a, b *Version) bool {
	return SupersedesBy(a.Seq, a.ID, b.Seq, b.ID)
}

// SupersedesBy is [Supersedes] on the two facts it reads.
func SupersedesBy(aSeq int64, aID string, bSeq int64, bID string) bool {
	return aSeq > bSeq || aSeq == bSeq && aID < bID
}

// Next is what the version after another must carry (02 §4.2).
type Next struct {
	Key     string
	Seq     int64
	Prev    string
	Genesis string
}

// NextAfter derives the next version after current, the version a writer
// holds as current, a delete included (02 §4.2).
func NextAfter(current *Version) Next {
	return Next{Key: current.Key, Seq: current.Seq + 1, Prev: current.ID, Genesis: current.FirstID()}
}

// Apply sets key, seq, prev and genesis on an unsigned version.
func (n Next) Apply(o *canonical.Object) {
	o.Set("key", n.Key)
	o.Set("seq", float64(n.Seq))
	o.Set("prev", n.Prev)
	o.Set("genesis", n.Genesis)
}
