package record

import (
	"crypto/sha256"
	"encoding/base64"
	"sync"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// Verifier runs the crypto gate of 02 §3.3 (and §4.6 #9, the body hash).
// The zero value works; it is safe for concurrent use.
type Verifier struct {
	// Resolver turns authors into keys; nil uses one of the Verifier's own.
	Resolver *identity.Resolver
	// Cache remembers passing verdicts by (id, signature) (§3.2); nil
	// remembers none.
	Cache *VerdictCache

	once sync.Once
	own  *identity.Resolver
	bufs sync.Pool // of *[]byte, Verify's buffers
}

func (vf *Verifier) resolver() *identity.Resolver {
	if vf.Resolver != nil {
		return vf.Resolver
	}
	vf.once.Do(func() { vf.own = &identity.Resolver{} })
	return vf.own
}

// Verify checks a decoded version in 02 §3.3's order: a body that is present
// hashes to bodyHash (§4.6 #9, step 4), the id is the content id of the
// signed part (step 1), the author resolves to a P-256 key (step 2) and the
// signature verifies (step 3). Steps 1 and 4 run on every copy; a passing
// verdict of steps 2–3 cached under (id, signature) is applied only after
// them (§3.2). A stub verifies without its body.
func (vf *Verifier) Verify(v *Version) error {
	// One buffer for the body's canonical form, then the signed part's,
	// reused across verifications: canonical's writer is recursive, so a
	// buffer handed to it is on the heap anyway, and a version a
	// verification is a kilobyte of garbage at import rates.
	bp, _ := vf.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
		*bp = make([]byte, 0, 1024)
	}
	buf := (*bp)[:0]
	defer func() {
		if cap(buf) <= maxPooledBuf {
			*bp = buf[:0]
			vf.bufs.Put(bp)
		}
	}()
	if v.HasBody && !v.Deleted {
		var err error
		if buf, err = checkBody(buf, v); err != nil {
			return err
		}
	}
	payload, err := AppendSignedPart(buf[:0], v.obj)
	if err != nil {
		return refuse(CodeID, "id", "the signed part has no canonical form: "+err.Error())
	}
	buf = payload
	digest := sha256.Sum256(payload)
	if d, ok := v.Digest(); !ok || d != digest {
		return refuse(CodeID, "id", "id is not the content id of the signed part (02 §3.3 step 1)")
	}
	if vf.Cache != nil && vf.Cache.Passed(digest, v.Signature) {
		return nil
	}
	key, err := vf.resolver().Resolve(v.Author)
	if err != nil {
		return refuse(CodeAuthor, "author", "author does not resolve to a P-256 key (02 §3.3 step 2): "+err.Error())
	}
	sig, ok := decodeSignature(v.Signature)
	if !ok {
		return refuse(CodeSignature, "signature", "signature is not base64url of 64 bytes (02 §3.1)")
	}
	if !key.VerifyDigest(digest[:], sig[:]) {
		return refuse(CodeSignature, "signature", "the signature does not verify over the signed part under author's key (02 §3.3 step 3)")
	}
	if vf.Cache != nil {
		vf.Cache.Pass(digest, v.Signature)
	}
	return nil
}

// maxPooledBuf: a buffer of Verify's that grew past it (for a large body)
// is left to the collector rather than kept.
const maxPooledBuf = 64 << 10

// checkBody is 02 §4.6 #9 and §3.3 step 4. It writes the body's canonical
// form in buf and returns buf, grown if it had to.
func checkBody(buf []byte, v *Version) ([]byte, error) {
	b, err := canonical.Append(buf[:0], v.Body)
	if err != nil {
		return buf, refuse(CodeBody, "body", "the body has no canonical form: "+err.Error())
	}
	if !idMatches(sha256.Sum256(b), v.BodyHash) {
		return b, refuse(CodeBody, "body", "the body does not hash to bodyHash (02 §3.3 step 4, §4.6 #9)")
	}
	return b, nil
}

func idMatches(digest canonical.ID, text string) bool {
	var buf [canonical.IDLen]byte
	b, _ := digest.AppendText(buf[:0])
	return string(b) == text
}

// decodeSignature reads base64url without padding into 64 bytes.
func decodeSignature(s string) ([64]byte, bool) {
	var sig [64]byte
	if base64.RawURLEncoding.DecodedLen(len(s)) != 64 {
		return sig, false
	}
	n, err := base64.RawURLEncoding.Decode(sig[:], []byte(s))
	return sig, err == nil && n == 64
}

// VerdictCache remembers passing verdicts of 02 §3.3 steps 2–3 under
// (id, signature), as §3.2 allows; never a failing one. It holds at most
// Size entries (default 100,000), dropping the oldest half when full. Safe
// for concurrent use.
type VerdictCache struct {
	Size int

	mu   sync.Mutex
	cur  map[verdictKey]struct{}
	prev map[verdictKey]struct{}
}

// verdictKey holds the signature decoded: a key holds no pointer (a map
// of them costs the collector nothing to scan), and no substring of the
// line a version was read from, which would keep the whole line alive as
// long as the verdict.
type verdictKey struct {
	id  canonical.ID
	sig [64]byte
}

// Passed reports whether (id, signature) passed before.
func (c *VerdictCache) Passed(id canonical.ID, sig string) bool {
	raw, ok := decodeSignature(sig)
	if !ok {
		return false // never passed: it does not decode
	}
	k := verdictKey{id, raw}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cur[k]; ok {
		return true
	}
	if _, ok := c.prev[k]; ok {
		c.putLocked(k)
		return true
	}
	return false
}

// Pass records that (id, signature) passed steps 2–3.
func (c *VerdictCache) Pass(id canonical.ID, sig string) {
	raw, ok := decodeSignature(sig)
	if !ok {
		return
	}
	c.mu.Lock()
	c.putLocked(verdictKey{id, raw})
	c.mu.Unlock()
}

func (c *VerdictCache) putLocked(k verdictKey) {
	size := c.Size
	if size <= 0 {
		size = 100_000
	}
	if c.cur == nil || len(c.cur) >= (size+1)/2 {
		c.prev = c.cur
		c.cur = make(map[verdictKey]struct{}, 64)
	}
	c.cur[k] = struct{}{}
}

// Len is the number of verdicts held.
func (c *VerdictCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.prev)
}
