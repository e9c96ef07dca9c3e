package bench

import "testing"

var sink []byte

// measure counts what one operation allocates, and when the operation
// runs in a Loop, what runs before the loop is not counted.
func TestMeasure(t *testing.T) {
	m := measure(func(b *B) {
		for range b.N {
			sink = make([]byte, 4096)
		}
	})
	if m.AllocsPerOp != 1 || m.BytesPerOp < 4096 || m.BytesPerOp > 8192 || m.NsPerOp <= 0 {
		t.Fatalf("an allocation of 4 KiB an operation measured as %+v", m)
	}
	var setups int
	m = measure(func(b *B) {
		setups++
		sink = make([]byte, 1<<20) // setup, before the loop
		n := 0
		for b.Loop() {
			n++
		}
		if n != b.N {
			t.Errorf("Loop ran %d times for N %d", n, b.N)
		}
	})
	if m.AllocsPerOp != 0 || m.BytesPerOp != 0 {
		t.Fatalf("a loop that allocates nothing measured as %+v (setup counted)", m)
	}
	if setups < 2 {
		t.Fatalf("measure ran the function %d times: no ramp to a second's run", setups)
	}
}
