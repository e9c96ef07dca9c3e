package seal

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

func sealedFileOf(t *testing.T, k *Key, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	s := NewFileSealer(k, testSpace, &out)
	// Written in uneven pieces: chunks do not follow writes.
	for p := data; len(p) > 0; {
		n := min(len(p), 1+len(p)%7919)
		if _, err := s.Write(p[:n]); err != nil {
			t.Fatal(err)
		}
		p = p[n:]
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestFileSealRoundTrip(t *testing.T) {
	k := NewKey()
	ring, _ := NewKeyring(testSpace, k.ID())
	ring.Offer(k)
	for _, n := range []int{0, 1, 14, FileChunk - 1, FileChunk, FileChunk + 1, 3 * FileChunk, 3*FileChunk + 5} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*7 + i/FileChunk)
		}
		sealed := sealedFileOf(t, k, data)
		if int64(len(sealed)) != SealedFileSize(int64(n)) {
			t.Fatalf("%d bytes: sealed %d, SealedFileSize says %d", n, len(sealed), SealedFileSize(int64(n)))
		}
		if got, err := OpenedFileSize(int64(len(sealed))); err != nil || got != int64(n) {
			t.Fatalf("%d bytes: OpenedFileSize %d %v", n, got, err)
		}
		if id, err := FileKeyID(sealed); err != nil || id != k.ID() {
			t.Fatalf("%s %v", id, err)
		}
		got, err := ring.OpenFile(sealed)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if whole := SealFile(k, testSpace, data); len(whole) != len(sealed) {
			t.Fatalf("SealFile %d, the stream %d", len(whole), len(sealed))
		}
	}
}

// Any range reads what the file holds there, opening only its chunks.
func TestFileOpenerRanges(t *testing.T) {
	k := NewKey()
	data := make([]byte, 5*FileChunk+123)
	for i := range data {
		data[i] = byte(i ^ i>>9)
	}
	sealed := sealedFileOf(t, k, data)
	o, err := NewFileOpener(k, testSpace, bytes.NewReader(sealed), int64(len(sealed)))
	if err != nil || o.Size() != int64(len(data)) {
		t.Fatalf("%v %d", err, o.Size())
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		a := r.IntN(len(data))
		b := a + r.IntN(len(data)-a+1)
		got := make([]byte, b-a)
		n, err := o.ReadAt(got, int64(a))
		if n != b-a || (err != nil && err != io.EOF) || !bytes.Equal(got, data[a:b]) {
			t.Fatalf("[%d,%d): %d %v", a, b, n, err)
		}
	}
	if n, err := o.ReadAt(make([]byte, 4), int64(len(data))); n != 0 || err != io.EOF {
		t.Fatalf("past the end: %d %v", n, err)
	}
	// A damaged chunk fails only the reads that touch it.
	bad := bytes.Clone(sealed)
	bad[FileHead+2*sealedChunk+10] ^= 1
	o, _ = NewFileOpener(k, testSpace, bytes.NewReader(bad), int64(len(bad)))
	if _, err := o.ReadAt(make([]byte, 10), 0); err != nil {
		t.Fatalf("chunk 0 is whole: %v", err)
	}
	_, err = o.ReadAt(make([]byte, 10), 2*FileChunk+3)
	wantErr(t, err, ErrOpen, CodeOpen)
}

// No chunk can be dropped, reordered, repeated, cut off or added; the file
// opens only in its space, under its key, as a file.
func TestFileSealTamper(t *testing.T) {
	k := NewKey()
	ring, _ := NewKeyring(testSpace, k.ID())
	ring.Offer(k)
	data := bytes.Repeat([]byte("photo"), 3*FileChunk/5+100) // 4 chunks, the last short
	sealed := sealedFileOf(t, k, data)
	if bytes.Contains(sealed, []byte("photophoto")) {
		t.Fatal("plaintext in the sealed file")
	}
	chunk := func(i int) []byte {
		a := FileHead + i*sealedChunk
		return sealed[a:min(a+sealedChunk, len(sealed))]
	}
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	head := sealed[:FileHead]
	for name, c := range map[string]struct {
		b    []byte
		want error
		code string
	}{
		"swapped":             {join(head, chunk(1), chunk(0), chunk(2), chunk(3)), ErrOpen, CodeOpen},
		"dropped":             {join(head, chunk(0), chunk(2), chunk(3)), ErrOpen, CodeOpen},
		"repeated":            {join(head, chunk(0), chunk(0), chunk(1), chunk(2), chunk(3)), ErrOpen, CodeOpen},
		"cut at a chunk":      {join(head, chunk(0), chunk(1), chunk(2)), ErrOpen, CodeOpen},
		"cut inside a chunk":  {sealed[:len(sealed)-5], ErrOpen, CodeOpen},
		"a chunk added":       {join(sealed, chunk(1)), ErrOpen, CodeOpen},
		"a bit flipped":       {func() []byte { b := bytes.Clone(sealed); b[FileHead+sealedChunk+7] ^= 0x40; return b }(), ErrOpen, CodeOpen},
		"another salt":        {func() []byte { b := bytes.Clone(sealed); b[40] ^= 1; return b }(), ErrOpen, CodeOpen},
		"another key named":   {func() []byte { b := bytes.Clone(sealed); b[0] ^= 1; return b }(), ErrNoKey, CodeNoKey},
		"another format":      {func() []byte { b := bytes.Clone(sealed); b[32] = 1; return b }(), ErrMalformed, CodeFile},
		"shorter than a head": {sealed[:FileOverhead-1], ErrMalformed, CodeFile},
		"a last chunk of 5":   {join(head, chunk(0), make([]byte, 5)), ErrMalformed, CodeFile},
	} {
		_, err := ring.OpenFile(c.b)
		if err == nil {
			t.Fatalf("%s: opened", name)
		}
		t.Run(name, func(t *testing.T) { wantErr(t, err, c.want, c.code) })
	}
	_, err := OpenFile(k, otherSpace, sealed)
	wantErr(t, err, ErrOpen, CodeOpen)
	// A file is not a body: the purposes differ.
	b := Binding{Purpose: PurposeBody, Space: testSpace}
	nonce := chunkNonce(0, false)
	if _, err := fileAEAD(k, sealed[33:FileHead]).Open(nil, nonce[:], chunk(0), b.ad(k.ID())); err == nil {
		t.Fatal("a file's chunk opened as a body")
	}
}

// The empty file is one chunk, which must open too.
func TestFileSealEmpty(t *testing.T) {
	k := NewKey()
	sealed := SealFile(k, testSpace, nil)
	if len(sealed) != FileOverhead {
		t.Fatalf("%d", len(sealed))
	}
	if got, err := OpenFile(k, testSpace, sealed); err != nil || len(got) != 0 {
		t.Fatalf("%q %v", got, err)
	}
	bad := bytes.Clone(sealed)
	bad[len(bad)-1] ^= 1
	_, err := OpenFile(k, testSpace, bad)
	wantErr(t, err, ErrOpen, CodeOpen)
}
