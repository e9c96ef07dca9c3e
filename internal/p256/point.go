package p256

// jacobian is a point (X/Z², Y/Z³) of P-256; Z = 0 is the point at
// infinity.
type jacobian struct{ x, y, z fe }

// affine is a point (x, y) of P-256, never the point at infinity.
type affine struct{ x, y fe }

// The curve's b and generator, in Montgomery form.
var (
	feB = mustFe("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b")
	gen = affine{
		x: mustFe("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"),
		y: mustFe("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"),
	}
)

func mustFe(hex string) fe {
	var b [32]byte
	for i := range b {
		b[i] = unhex(hex[2*i])<<4 | unhex(hex[2*i+1])
	}
	z, ok := feFromBytes(&b)
	if !ok {
		panic("p256: constant out of range")
	}
	return z
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// onCurve reports whether y² = x³ − 3x + b.
func (a *affine) onCurve() bool {
	var y2, x3, t fe
	feSqr(&y2, &a.y)
	feSqr(&x3, &a.x)
	feMul(&x3, &x3, &a.x)
	feAdd(&t, &a.x, &a.x)
	feAdd(&t, &t, &a.x)
	feSub(&x3, &x3, &t)
	feAdd(&x3, &x3, &feB)
	return y2.equal(&x3)
}

func (j *jacobian) setAffine(a *affine) {
	j.x, j.y, j.z = a.x, a.y, feOne
}

// double sets j = 2·j (dbl-2001-b, a = −3).
func (j *jacobian) double() {
	if j.z.isZero() {
		return
	}
	var delta, gamma, beta, alpha, t, u fe
	feSqr(&delta, &j.z)
	feSqr(&gamma, &j.y)
	feMul(&beta, &j.x, &gamma)
	feSub(&t, &j.x, &delta)
	feAdd(&u, &j.x, &delta)
	feMul(&alpha, &t, &u)
	feAdd(&t, &alpha, &alpha)
	feAdd(&alpha, &t, &alpha)
	// Z3 = (Y+Z)² − γ − δ
	feAdd(&t, &j.y, &j.z)
	feSqr(&t, &t)
	feSub(&t, &t, &gamma)
	feSub(&j.z, &t, &delta)
	// X3 = α² − 8β
	feAdd(&beta, &beta, &beta)
	feAdd(&beta, &beta, &beta) // 4β
	feSqr(&t, &alpha)
	feAdd(&u, &beta, &beta)
	feSub(&j.x, &t, &u)
	// Y3 = α(4β − X3) − 8γ²
	feSub(&t, &beta, &j.x)
	feMul(&t, &t, &alpha)
	feSqr(&gamma, &gamma)
	feAdd(&gamma, &gamma, &gamma)
	feAdd(&gamma, &gamma, &gamma)
	feAdd(&gamma, &gamma, &gamma)
	feSub(&j.y, &t, &gamma)
}

// addAffine sets j = j + a (madd-2007-bl), with the cases that formula
// does not cover: j at infinity, j = a, j = −a.
func (j *jacobian) addAffine(a *affine) {
	if j.z.isZero() {
		j.setAffine(a)
		return
	}
	var z1z1, u2, s2, h, hh, i, jj, r, v fe
	feSqr(&z1z1, &j.z)
	feMul(&u2, &a.x, &z1z1)
	feMul(&s2, &a.y, &j.z)
	feMul(&s2, &s2, &z1z1)
	feSub(&h, &u2, &j.x)
	feSub(&r, &s2, &j.y)
	if h.isZero() {
		if r.isZero() {
			j.double()
		} else {
			*j = jacobian{}
		}
		return
	}
	feAdd(&r, &r, &r)
	feSqr(&hh, &h)
	feAdd(&i, &hh, &hh)
	feAdd(&i, &i, &i)
	feMul(&jj, &h, &i)
	feMul(&v, &j.x, &i)
	// Z3 = (Z1 + H)² − Z1Z1 − HH
	feAdd(&j.z, &j.z, &h)
	feSqr(&j.z, &j.z)
	feSub(&j.z, &j.z, &z1z1)
	feSub(&j.z, &j.z, &hh)
	// X3 = r² − J − 2V
	var x3, t fe
	feSqr(&x3, &r)
	feSub(&x3, &x3, &jj)
	feSub(&x3, &x3, &v)
	feSub(&x3, &x3, &v)
	// Y3 = r(V − X3) − 2·Y1·J
	feSub(&t, &v, &x3)
	feMul(&t, &t, &r)
	feMul(&jj, &jj, &j.y)
	feAdd(&jj, &jj, &jj)
	feSub(&j.y, &t, &jj)
	j.x = x3
}

// add sets j = j + k (add-2007-bl), with the cases that formula does not
// cover. It is used only when a table is built.
func (j *jacobian) add(k *jacobian) {
	if k.z.isZero() {
		return
	}
	if j.z.isZero() {
		*j = *k
		return
	}
	var z1z1, z2z2, u1, u2, s1, s2, h, r fe
	feSqr(&z1z1, &j.z)
	feSqr(&z2z2, &k.z)
	feMul(&u1, &j.x, &z2z2)
	feMul(&u2, &k.x, &z1z1)
	feMul(&s1, &j.y, &k.z)
	feMul(&s1, &s1, &z2z2)
	feMul(&s2, &k.y, &j.z)
	feMul(&s2, &s2, &z1z1)
	feSub(&h, &u2, &u1)
	feSub(&r, &s2, &s1)
	if h.isZero() {
		if r.isZero() {
			j.double()
		} else {
			*j = jacobian{}
		}
		return
	}
	feAdd(&r, &r, &r)
	var i, jj, v, t fe
	feAdd(&i, &h, &h)
	feSqr(&i, &i)
	feMul(&jj, &h, &i)
	feMul(&v, &u1, &i)
	// Z3 = ((Z1 + Z2)² − Z1Z1 − Z2Z2)·H
	feAdd(&t, &j.z, &k.z)
	feSqr(&t, &t)
	feSub(&t, &t, &z1z1)
	feSub(&t, &t, &z2z2)
	feMul(&j.z, &t, &h)
	// X3 = r² − J − 2V
	feSqr(&j.x, &r)
	feSub(&j.x, &j.x, &jj)
	feSub(&j.x, &j.x, &v)
	feSub(&j.x, &j.x, &v)
	// Y3 = r(V − X3) − 2·S1·J
	feSub(&t, &v, &j.x)
	feMul(&t, &t, &r)
	feMul(&s1, &s1, &jj)
	feAdd(&s1, &s1, &s1)
	feSub(&j.y, &t, &s1)
}

// normalize turns points, none at infinity, into affine ones with one
// inversion (Montgomery's trick).
func normalize(out []affine, in []jacobian) {
	if len(in) == 0 {
		return
	}
	// prefix[i] = z0·…·zi
	prefix := make([]fe, len(in))
	prefix[0] = in[0].z
	for i := 1; i < len(in); i++ {
		feMul(&prefix[i], &prefix[i-1], &in[i].z)
	}
	var inv fe
	feInv(&inv, &prefix[len(in)-1])
	for i := len(in) - 1; i >= 0; i-- {
		var zi fe // 1/z_i
		if i > 0 {
			feMul(&zi, &inv, &prefix[i-1])
			feMul(&inv, &inv, &in[i].z)
		} else {
			zi = inv
		}
		var zi2 fe
		feSqr(&zi2, &zi)
		feMul(&out[i].x, &in[i].x, &zi2)
		feMul(&zi2, &zi2, &zi)
		feMul(&out[i].y, &in[i].y, &zi2)
	}
}
