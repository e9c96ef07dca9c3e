package negentropy_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/negentropy/internal/gen"
)

func fuzzStorage(t testing.TB) negentropy.Storage {
	items, _ := gen.Pair(gen.Spec{N: 300, Timestamps: gen.Clustered, Seed: 3})
	v, err := gen.Vector(items)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func seedMessages(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x61})
	f.Add([]byte{0x62, 0xaa})
	f.Add([]byte{0x61, 0x00, 0x00, 0x02, 0x00})
	f.Add([]byte{0x61, 0x00, 0x00, 0x01, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	a, b := gen.Pair(gen.Spec{N: 600, OnlyA: 0.1, OnlyB: 0.1, Timestamps: gen.Clustered, Seed: 3})
	va, _ := gen.Vector(a)
	vb, _ := gen.Vector(b)
	if tr, err := sync(va, vb, 0, 0); err == nil {
		for _, m := range tr.msgs[:min(len(tr.msgs), 6)] {
			f.Add(m)
		}
	}
}

// FuzzServerReconcile feeds arbitrary messages to a server: an answer or an
// error wrapping ErrMalformed, never a panic.
func FuzzServerReconcile(f *testing.F) {
	seedMessages(f)
	st := fuzzStorage(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		for _, lim := range []uint64{0, 4096} {
			s, _ := negentropy.NewServer(st, lim)
			out, err := s.Reconcile(msg)
			if err != nil {
				if !errors.Is(err, negentropy.ErrMalformed) {
					t.Fatalf("error not ErrMalformed: %v", err)
				}
				continue
			}
			if len(out) == 0 || out[0] != negentropy.ProtocolVersion {
				t.Fatalf("answer %x does not start with the version", out)
			}
			if lim != 0 && uint64(len(out)) > lim {
				t.Fatalf("answer of %d bytes over limit %d", len(out), lim)
			}
		}
	})
}

// FuzzClientReconcile feeds arbitrary messages to a client.
func FuzzClientReconcile(f *testing.F) {
	seedMessages(f)
	st := fuzzStorage(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		for _, lim := range []uint64{0, 4096} {
			c, _ := negentropy.NewClient(st, lim)
			r, err := c.Reconcile(msg)
			var ve *negentropy.VersionError
			if err != nil {
				if !errors.Is(err, negentropy.ErrMalformed) && !errors.As(err, &ve) {
					t.Fatalf("error neither ErrMalformed nor VersionError: %v", err)
				}
				continue
			}
			if len(r.Have) > st.Size() {
				t.Fatalf("%d have ids from %d items", len(r.Have), st.Size())
			}
			if lim != 0 && uint64(len(r.Next)) > lim {
				t.Fatalf("message of %d bytes over limit %d", len(r.Next), lim)
			}
		}
	})
}

// FuzzReconcileLoop draws two sets from the input and reconciles them both
// ways, each storage on each side, checking have/need.
func FuzzReconcileLoop(f *testing.F) {
	f.Add(uint64(1), uint16(100), uint8(10), uint8(10), uint8(0), false, false)
	f.Add(uint64(2), uint16(2000), uint8(1), uint8(200), uint8(1), true, false)
	f.Add(uint64(3), uint16(5000), uint8(3), uint8(3), uint8(2), true, true)
	f.Add(uint64(4), uint16(40), uint8(255), uint8(0), uint8(3), false, true)
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, pa, pb, tsMode uint8, limA, limB bool) {
		layouts := []gen.Timestamps{gen.Spread, gen.Clustered, gen.Equal, gen.Wide}
		spec := gen.Spec{
			N:          int(n % 8000),
			OnlyA:      float64(pa) / 512,
			OnlyB:      float64(pb) / 512,
			Timestamps: layouts[int(tsMode)%len(layouts)],
			Seed:       seed,
		}
		a, b := gen.Pair(spec)
		lim := func(on bool) uint64 {
			if on {
				return 4096 + binary.LittleEndian.Uint64([]byte{byte(seed), byte(seed >> 8), 0, 0, 0, 0, 0, 0})%8192
			}
			return 0
		}
		va, _ := gen.Vector(a)
		vb, _ := gen.Vector(b)
		ta, _ := gen.Tree(a)
		tb, _ := gen.Tree(b)
		dups := limA || limB
		for _, dir := range []struct {
			x, y       negentropy.Storage
			xs, ys     []negentropy.Item
			limX, limY uint64
		}{
			{va, tb, a, b, lim(limA), lim(limB)},
			{vb, ta, b, a, lim(limB), lim(limA)},
		} {
			tr, err := sync(dir.x, dir.y, dir.limX, dir.limY)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameSet(tr.have, diff(dir.xs, dir.ys), dups); err != nil {
				t.Fatalf("have: %v", err)
			}
			if err := sameSet(tr.need, diff(dir.ys, dir.xs), dups); err != nil {
				t.Fatalf("need: %v", err)
			}
		}
	})
}
