package bench

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
)

// SealConfig configures [RunSeal]. Zero fields take their defaults.
type SealConfig struct {
	// BodyBytes is the size of the body's canonical JSON (default 600).
	BodyBytes int
	// Rounds is how many times each benchmark runs; medians are reported
	// (default 5).
	Rounds int
}

// SealResult is what [RunSeal] measured on one body of a private space
// (docs/private-spaces.md), each against a bound of the same run:
//
//   - Seal and Open: the envelope, (*seal.Key).Seal and Open of the
//     plaintext {"body", "links"} with its binding, against a bare
//     AES-256-GCM Seal and Open of the same bytes (an AEAD made once,
//     a random nonce). Goal ≤ 1.5×.
//   - SealBody and OpenBody: the whole of what a writer and a reader do,
//     from the body and links to the version's {sealed, keyId} and back
//     (canonical JSON, the envelope, base64url, reading the plaintext),
//     against the same bare AES-256-GCM, and against it followed by the
//     base64url any JSON carrier of sealed bytes needs.
//   - Box and OpenBox: one space key boxed to one member (HPKE), for scale.
type SealResult struct {
	BodyBytes      int `json:"bodyBytes"`
	PlaintextBytes int `json:"plaintextBytes"`
	Rounds         int `json:"rounds"`

	BareSeal  Measure `json:"bareSeal"`
	BareOpen  Measure `json:"bareOpen"`
	Seal      Measure `json:"seal"`
	Open      Measure `json:"open"`
	SealRatio float64 `json:"sealRatio"`
	OpenRatio float64 `json:"openRatio"`

	BareSealText      Measure `json:"bareSealText"`
	BareOpenText      Measure `json:"bareOpenText"`
	SealBody          Measure `json:"sealBody"`
	OpenBody          Measure `json:"openBody"`
	SealBodyRatio     float64 `json:"sealBodyRatio"`
	OpenBodyRatio     float64 `json:"openBodyRatio"`
	SealBodyTextRatio float64 `json:"sealBodyTextRatio"`
	OpenBodyTextRatio float64 `json:"openBodyTextRatio"`

	Box     Measure `json:"box"`
	OpenBox Measure `json:"openBox"`

	// Each round's envelope ratios, for the spread behind the medians.
	SealRatios []float64 `json:"sealRatios"`
	OpenRatios []float64 `json:"openRatios"`
}

// SealBodyOf is a body whose canonical JSON is n bytes (at least 40): a
// note with a title, a text filling the rest, and a flag.
func SealBodyOf(n int) (any, error) {
	const frame = `{"done":false,"text":"","title":"Groceries"}`
	if n < len(frame) {
		return nil, fmt.Errorf("a body is at least %d bytes", len(frame))
	}
	text := strings.Repeat("milk bread ", n/11+1)[:n-len(frame)]
	return canonical.NewObject("title", "Groceries", "text", text, "done", false), nil
}

// RunSeal measures sealing and opening one body.
func RunSeal(ctx context.Context, cfg SealConfig) (SealResult, error) {
	if cfg.BodyBytes <= 0 {
		cfg.BodyBytes = 600
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = 5
	}
	body, err := SealBodyOf(cfg.BodyBytes)
	if err != nil {
		return SealResult{}, err
	}
	const space, coll, key = "bimjoifogypbqrtuich3e375d67y43znkjsjnp4q4qhe7gwf7u74a", "app.note", "akthxqofxox3iszhpi5j3zhl6a.mfrggzdfmztwq2lknnwg23tpoa"
	content := collection.Content{Body: body, Links: []record.Link{{Rel: "in", To: "akthxqofxox3iszhpi5j3zhl6a.list"}}}
	pt, err := seal.Plaintext(content)
	if err != nil {
		return SealResult{}, err
	}
	k := seal.NewKey()
	bind := seal.BodyBinding(space, coll, key)
	block, err := aes.NewCipher(k.Bytes())
	if err != nil {
		return SealResult{}, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return SealResult{}, err
	}
	var nonce [12]byte
	bareCT := gcm.Seal(nil, nonce[:], pt, nil)
	bareText := base64.RawURLEncoding.EncodeToString(bareCT)
	env := k.Seal(nil, pt, bind)
	sealed, err := seal.SealBody(k, space, coll, key, content)
	if err != nil {
		return SealResult{}, err
	}
	member := seal.NewMemberKey()
	box, err := seal.NewBox(k, space, "did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E", member.Public())
	if err != nil {
		return SealResult{}, err
	}

	res := SealResult{BodyBytes: cfg.BodyBytes, PlaintextBytes: len(pt), Rounds: cfg.Rounds}
	var bs, bo, s, o, bst, bot, sb, ob, bx, obx []Measure
	var sealBodyR, openBodyR, sealTextR, openTextR []float64
	for range cfg.Rounds {
		if err := ctx.Err(); err != nil {
			return SealResult{}, err
		}
		var failure error
		check := func(err error) {
			if err != nil {
				failure = err
			}
		}
		out := make([]byte, 0, len(pt)+seal.Overhead)
		rbs := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				rand.Read(nonce[:])
				out = gcm.Seal(out[:0], nonce[:], pt, nil)
			}
		})
		rs := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				out = k.Seal(out[:0], pt, bind)
			}
		})
		nonce = [12]byte{}
		rbo := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := gcm.Open(out[:0], nonce[:], bareCT, nil)
				check(err)
			}
		})
		ro := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := k.Open(out[:0], env, bind, "sealed")
				check(err)
			}
		})
		rbst := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				rand.Read(nonce[:])
				_ = base64.RawURLEncoding.EncodeToString(gcm.Seal(out[:0], nonce[:], pt, nil))
			}
		})
		nonce = [12]byte{}
		rbot := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				ct, err := base64.RawURLEncoding.DecodeString(bareText)
				check(err)
				_, err = gcm.Open(ct[:0], nonce[:], ct, nil)
				check(err)
			}
		})
		rsb := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := seal.SealBody(k, space, coll, key, content)
				check(err)
			}
		})
		rob := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := seal.OpenBody(k, space, coll, key, sealed)
				check(err)
			}
		})
		rbx := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := seal.NewBox(k, space, box.Member, member.Public())
				check(err)
			}
		})
		robx := measure(func(b *B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := box.Open(member, space)
				check(err)
			}
		})
		if failure != nil {
			return SealResult{}, failure
		}
		if rbs.NsPerOp <= 0 || rbo.NsPerOp <= 0 || rbst.NsPerOp <= 0 || rbot.NsPerOp <= 0 {
			return SealResult{}, errors.New("bench: a bound measured no time")
		}
		bs, bo, s, o = append(bs, rbs), append(bo, rbo), append(s, rs), append(o, ro)
		bst, bot, sb, ob, bx, obx = append(bst, rbst), append(bot, rbot), append(sb, rsb), append(ob, rob), append(bx, rbx), append(obx, robx)
		res.SealRatios = append(res.SealRatios, rs.NsPerOp/rbs.NsPerOp)
		res.OpenRatios = append(res.OpenRatios, ro.NsPerOp/rbo.NsPerOp)
		sealBodyR = append(sealBodyR, rsb.NsPerOp/rbs.NsPerOp)
		openBodyR = append(openBodyR, rob.NsPerOp/rbo.NsPerOp)
		sealTextR = append(sealTextR, rsb.NsPerOp/rbst.NsPerOp)
		openTextR = append(openTextR, rob.NsPerOp/rbot.NsPerOp)
	}
	res.BareSeal, res.BareOpen, res.Seal, res.Open = medianMeasure(bs), medianMeasure(bo), medianMeasure(s), medianMeasure(o)
	res.BareSealText, res.BareOpenText = medianMeasure(bst), medianMeasure(bot)
	res.SealBody, res.OpenBody, res.Box, res.OpenBox = medianMeasure(sb), medianMeasure(ob), medianMeasure(bx), medianMeasure(obx)
	res.SealRatio = median(append([]float64(nil), res.SealRatios...))
	res.OpenRatio = median(append([]float64(nil), res.OpenRatios...))
	res.SealBodyRatio, res.OpenBodyRatio = median(sealBodyR), median(openBodyR)
	res.SealBodyTextRatio, res.OpenBodyTextRatio = median(sealTextR), median(openTextR)
	return res, nil
}
