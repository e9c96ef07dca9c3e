package peers

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/minca-go/minca/transport"
)

// A file is read to be served in chunks of whole disk blocks, each
// ending on a block's boundary of the file, from any offset (a resumed
// transfer's first chunk is cut short to reach one), with its last chunk
// whatever is left: the asker writes them past its page cache (docs/
// sync.md §7.7). Every byte once, in order.
func TestServedChunksEndOnBlocks(t *testing.T) {
	const chunk = 1<<20 - transport.DataAlign
	data := make([]byte, 5<<20+123)
	rand.NewChaCha8([32]byte{1}).Read(data)
	for _, from := range []int64{0, 5000, transport.DataAlign, 5<<20 - 7} {
		a := startReadAhead(bytes.NewReader(data), from, int64(len(data)), chunk)
		var got []byte
		off := from
		for off < int64(len(data)) {
			c, ok := a.next(context.Background())
			if !ok || c.err != nil {
				t.Fatalf("from %d: chunk at %d: %v", from, off, c.err)
			}
			b := c.buf[aheadRoom : aheadRoom+c.n]
			if end := off + int64(c.n); end != int64(len(data)) && (end%transport.DataAlign != 0 || c.n > chunk) {
				t.Fatalf("from %d: a chunk of %d bytes from %d ends off a block's boundary, or is longer than %d", from, c.n, off, chunk)
			}
			got = append(got, b...)
			off += int64(c.n)
			a.done(c)
		}
		a.stop()
		if !bytes.Equal(got, data[from:]) {
			t.Fatalf("from %d: the chunks are not the file's bytes", from)
		}
	}
}
