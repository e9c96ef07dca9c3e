package record

import (
	"fmt"
	"strconv"
)

// CheckChain checks a later version against P, the version its prev names
// (02 §4.7): same key, same collection, seq one more, and genesis P's id at
// P.seq 0, else P's genesis. A caller that does not hold P waits (§9.5).
func CheckChain(v, p *Version) error {
	switch {
	case v.Seq == 0:
		return nil
	case p.ID != v.Prev:
		return fmt.Errorf("minca/record: CheckChain: given %s, but prev names %s", p.ID, v.Prev)
	case p.Key != v.Key:
		return refuse(CodeChainKey, "key", "key differs from the key of the version prev names (02 §4.7 #1)")
	case p.Collection != v.Collection:
		return refuse(CodeChainCollection, "collection", "collection differs from the collection of the version prev names (02 §4.7 #2)")
	case v.Seq != p.Seq+1:
		return refuse(CodeChainSeq, "seq", "seq must be "+strconv.FormatInt(p.Seq+1, 10)+", one more than the version prev names (02 §4.7 #3)")
	case v.Genesis != p.FirstID():
		return refuse(CodeChainGenesis, "genesis", "genesis must be "+p.FirstID()+", the first version of the version prev names (02 §4.7 #4)")
	}
	return nil
}

// CheckGenesis checks that G, the version a later version's genesis names,
// is that record's first version: seq 0, the same key and the same
// collection (02 §4.6). A caller that does not hold G waits (§9.5).
func CheckGenesis(v, g *Version) error {
	if v.Seq == 0 {
		return nil
	}
	if g.ID != v.Genesis || g.Seq != 0 || g.Key != v.Key || g.Collection != v.Collection {
		return refuse(CodeChainFirst, "genesis", "the first version it names is not this record's: it needs seq 0, the same key and the same collection (02 §4.6)")
	}
	return nil
}
