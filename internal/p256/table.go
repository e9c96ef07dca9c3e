package p256

// A table holds, for a point P and a window width w, the affine points
// d·2^(w·i)·P for every window i and every d in 1..2^(w−1). A scalar,
// recoded in signed digits of w bits (−2^(w−1) < digit ≤ 2^(w−1)), is then
// multiplied by P with one addition of a looked-up point per non-zero
// digit and no doubling at all — the fixed-base method, used here for a
// public key as well as for the generator.
type table struct {
	w      uint
	half   int // 2^(w−1): points a window
	points []affine
}

// windows is how many windows of w bits a scalar below 2^256 needs once
// recoded in signed digits (the recoding may carry one bit out of the top).
func windows(w uint) int { return (256 + int(w)) / int(w) }

// windowsMax is the most windows either table has: windows(min(keyWindow,
// genWindow)).
const windowsMax = (256 + min(keyWindow, genWindow)) / min(keyWindow, genWindow)

// newTable builds the table of p, which is not the point at infinity.
func newTable(p *affine, w uint) *table {
	t := &table{w: w, half: 1 << (w - 1)}
	n := windows(w)
	jac := make([]jacobian, n*t.half)
	var base jacobian
	base.setAffine(p)
	for i := range n {
		row := jac[i*t.half : (i+1)*t.half]
		row[0] = base
		row[1] = base
		row[1].double()
		for d := 2; d < t.half; d++ {
			row[d] = row[d-1]
			row[d].add(&base)
		}
		// The next window's base is 2^w·base = 2·(half·base).
		base = row[t.half-1]
		base.double()
	}
	t.points = make([]affine, len(jac))
	normalize(t.points, jac)
	return t
}

// recode writes k (a scalar below 2^256, little-endian limbs) as signed
// digits of w bits, lowest first: k = Σ digits[i]·2^(w·i).
func recode(digits []int32, k *fe, w uint) {
	mask := uint64(1)<<w - 1
	half := int32(1) << (w - 1)
	carry := int32(0)
	for i := range digits {
		bit := uint(i) * w
		var v uint64
		if bit < 256 {
			v = k[bit/64] >> (bit % 64)
			if bit%64+w > 64 && bit/64 < 3 {
				v |= k[bit/64+1] << (64 - bit%64)
			}
			v &= mask
		}
		d := int32(v) + carry
		carry = 0
		if d > half {
			d -= 1 << w
			carry = 1
		}
		digits[i] = d
	}
}

// addMul adds k·P to acc, k given as the digits of recode.
func (t *table) addMul(acc *jacobian, digits []int32) {
	for i, d := range digits {
		switch {
		case d > 0:
			acc.addAffine(&t.points[i*t.half+int(d)-1])
		case d < 0:
			pt := t.points[i*t.half+int(-d)-1]
			feNeg(&pt.y, &pt.y)
			acc.addAffine(&pt)
		}
	}
}
