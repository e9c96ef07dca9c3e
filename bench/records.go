package bench

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// RecordsConfig configures [RunRecords].
type RecordsConfig struct {
	// Rounds is how many times each benchmark runs; the medians are
	// reported. Default 5.
	Rounds int
	// Progress, if set, is told of each round as it starts.
	Progress Progress
}

// RecordsResult is what [RunRecords] measured: the costs of the records
// core on a typical 600-byte version, and verification against the bound
// of a bare crypto/ecdsa verify of the same payload (issue: ≤ 1.2×).
type RecordsResult struct {
	VersionBytes  int     `json:"versionBytes"`
	Rounds        int     `json:"rounds"`
	CanonicalHash Measure `json:"canonicalHash"` // decode, canonicalise signed part and body, hash both
	Verify        Measure `json:"verify"`        // decode and verify (02 §3.3) from bytes
	Sign          Measure `json:"sign"`          // sign from the unsigned members
	BareVerify    Measure `json:"bareVerify"`    // SHA-256 + ecdsa.VerifyASN1 of the same payload
	// VerifyRatio is the median over rounds of Verify / BareVerify, each
	// round measuring both back to back.
	VerifyRatio float64 `json:"verifyRatio"`
}

// TypicalVersion signs a version of about 600 bytes: a to-do in a public
// space with its place in its writer's line.
func TypicalVersion(k *identity.PrivateKey) (*record.Version, error) {
	key, err := record.FreshKey(k.DID())
	if err != nil {
		return nil, err
	}
	v, err := canonical.Parse([]byte(`{"collection":"app.todo.item","createdAt":"2026-09-26T12:00:00.000Z","space":"bimjoifogypbqrtuich3e375d67y43znkjsjnp4q4qhe7gwf7u74a","seq":0,
	"log":{"n":41,"prev":"b47jrvlapsxwsx44hipgsfbwdbupytsv4giuf4hxgoj33hiq4oubq"},
	"body":{"text":"Buy milk and bread","done":false,"due":"2026-09-27"}}`))
	if err != nil {
		return nil, err
	}
	o := v.(*canonical.Object)
	o.Set("key", key)
	return record.Sign(o, k)
}

// RunRecords measures the records core.
func RunRecords(ctx context.Context, cfg RecordsConfig) (RecordsResult, error) {
	rounds := cfg.Rounds
	if rounds <= 0 {
		rounds = 5
	}
	k, err := identity.GenerateKey()
	if err != nil {
		return RecordsResult{}, err
	}
	v, err := TypicalVersion(k)
	if err != nil {
		return RecordsResult{}, err
	}
	data, err := v.MarshalJSON()
	if err != nil {
		return RecordsResult{}, err
	}
	payload, err := v.SignedPart()
	if err != nil {
		return RecordsResult{}, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(v.Signature)
	if err != nil {
		return RecordsResult{}, err
	}
	der := identity.SignatureDER(sig)
	pub := k.Public().ECDSA()
	unsigned := v.Object().Clone()
	vf := &record.Verifier{}

	var canon, verify, sign, bare []Measure
	var ratios []float64
	steps := newSteps(cfg.Progress, rounds)
	for i := 0; i < rounds; i++ {
		steps.next(fmt.Sprintf("round %d of %d", i+1, rounds))
		if err := ctx.Err(); err != nil {
			return RecordsResult{}, err
		}
		var failure error
		b := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				d := sha256.Sum256(payload)
				if !ecdsa.VerifyASN1(pub, d[:], der) {
					failure = fmt.Errorf("bare verify failed")
				}
			}
		})
		ver := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				x, err := record.Decode(data)
				if err == nil {
					err = vf.Verify(x)
				}
				if err != nil {
					failure = err
				}
			}
		})
		c := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				x, err := record.Decode(data)
				if err != nil {
					failure = err
					continue
				}
				p, _ := x.SignedPart()
				_ = canonical.IDOf(p)
				body, _ := canonical.Marshal(x.Body)
				_ = canonical.IDOf(body)
			}
		})
		s := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := record.Sign(unsigned, k); err != nil {
					failure = err
				}
			}
		})
		if failure != nil {
			return RecordsResult{}, failure
		}
		bare, verify, canon, sign = append(bare, b), append(verify, ver), append(canon, c), append(sign, s)
		if b.NsPerOp > 0 {
			ratios = append(ratios, ver.NsPerOp/b.NsPerOp)
		}
	}
	return RecordsResult{
		VersionBytes: len(data), Rounds: rounds,
		CanonicalHash: medianMeasure(canon), Verify: medianMeasure(verify), Sign: medianMeasure(sign),
		BareVerify: medianMeasure(bare), VerifyRatio: median(ratios),
	}, nil
}
