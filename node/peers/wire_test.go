package peers

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/minca-go/minca/transport"
)

// TestVersionsBuilderFrames: messages built one after another in one
// builder — small ones in a buffer of their own, large ones moved into a
// pooled buffer and built again in it — each decode to exactly the
// versions added, with nothing of the message before, and none is longer
// than the peer takes.
func TestVersionsBuilderFrames(t *testing.T) {
	const max = transport.DefaultFrame - 1
	version := func(i, size int) []byte {
		v := fmt.Appendf(nil, `{"n":%d,"pad":"`, i)
		v = append(v, bytes.Repeat([]byte{'a' + byte(i%26)}, size)...)
		return append(v, `"}`...)
	}
	vb := newVersionsBuilder(7, max)
	defer vb.release()
	// Sizes that stay small, cross smallVersions, fill a frame, and come
	// back small in the pooled buffer.
	for round, size := range []int{100, 3000, 20000, 900, 60000, 10} {
		var want [][]byte
		for i := 0; ; i++ {
			v := version(round*1000+i, size)
			if !vb.fits(len(v)) {
				break
			}
			vb.add(v)
			want = append(want, v)
			if len(want) == 40 && size < 1000 {
				break
			}
		}
		f := vb.frame(versLast)
		if len(f)-1 > max {
			t.Fatalf("round %d: a message of %d bytes; the peer takes %d", round, len(f)-1, max)
		}
		m, err := decode(f[1:])
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if m.sid != 7 || m.flag != versLast || len(m.versions) != len(want) {
			t.Fatalf("round %d: session %d, flag %d, %d versions; want 7, %d, %d", round, m.sid, m.flag, len(m.versions), versLast, len(want))
		}
		for i := range want {
			if !bytes.Equal(m.versions[i], want[i]) {
				t.Fatalf("round %d: version %d is %.40q, want %.40q", round, i, m.versions[i], want[i])
			}
		}
		if size >= 20000 && vb.pooled == nil {
			t.Fatalf("round %d: a message of %d bytes was not moved into a pooled buffer", round, len(f))
		}
		vb.reset()
	}
}
