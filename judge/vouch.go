package judge

import "github.com/minca-go/minca/record"

// Vouch remembers in the judge's verdict cache that a version this node
// has just signed passes steps 2–3 of the crypto gate (02 §3.3): its
// signature was made here, by the key its author names (record.Presign
// sets author to the signer's DID), over the signed part whose content id
// is its id. Verifying it again would repeat the ECDSA work for nothing.
// The cache holds passing verdicts under (id, signature) as §3.2 allows,
// so a copy from a peer gains from it only if it is this very signature
// over this very signed part; steps 1 and 4 (the id and the body hash)
// still run on every copy, this one included, and nothing a peer sends
// reaches the cache this way.
func (j *Judge) Vouch(vs []*record.Version) {
	vf := j.verifier()
	if vf.Cache == nil {
		return
	}
	for _, v := range vs {
		if d, ok := v.Digest(); ok {
			vf.Cache.Pass(d, v.Signature)
		}
	}
}
