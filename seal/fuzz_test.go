package seal

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/record"
)

// checkErr: every failure is an *Error with a known code and a sentinel.
func checkErr(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !slices.Contains(Codes(), e.Code) || e.Message == "" || e.kind == nil {
		t.Fatalf("not a *seal.Error with a known code: %v", err)
	}
}

// fuzzRing is a ring holding keyOf(1) as K₀ and a sealed body under it.
func fuzzBody(t testing.TB) (*Keyring, []byte) {
	k := keyOf(t, 1)
	ring, _ := NewKeyring(testSpace, k.ID())
	ring.Offer(k)
	body, err := SealBody(k, testSpace, "app.note", "owner.n", collection.Content{Body: "hello", Links: []record.Link{{Rel: "about", To: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := canonical.Marshal(body)
	return ring, b
}

// FuzzOpenBody: any sealed body a peer sends is refused with a known code,
// or opens to what was sealed — never a panic, and never a changed body
// opened.
func FuzzOpenBody(f *testing.F) {
	ring, genuine := fuzzBody(f)
	f.Add(genuine)
	f.Add(bytes.Replace(genuine, []byte(`"sealed":"A`), []byte(`"sealed":"B`), 1))
	f.Add([]byte(`{"keyId":"` + ring.FirstID() + `","sealed":""}`))
	f.Add([]byte(`{"keyId":"` + NewKey().ID() + `","sealed":"AQ"}`))
	f.Add([]byte(`{"keyId":1,"sealed":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := canonical.Parse(data)
		if err != nil {
			return
		}
		o, err := ring.OpenBody("app.note", "owner.n", v)
		if err != nil {
			checkErr(t, err)
			return
		}
		// Only the genuine envelope opens: the same body, the same links.
		if o.Body != "hello" || len(o.Links) != 1 || o.Links[0].To != "x" {
			t.Fatalf("opened something else: %v %v", o.Body, o.Links)
		}
	})
}

// FuzzEnvelope: raw envelope bytes under a key and binding.
func FuzzEnvelope(f *testing.F) {
	k := keyOf(f, 2)
	b := BodyBinding(testSpace, "c", "k")
	genuine := k.Seal(nil, []byte("plain"), b)
	f.Add(genuine)
	f.Add(genuine[:Overhead])
	f.Add([]byte{format})
	f.Add(append([]byte{2}, genuine[1:]...))
	f.Fuzz(func(t *testing.T, env []byte) {
		pt, err := k.Open(nil, env, b, "sealed")
		if err != nil {
			checkErr(t, err)
			return
		}
		if string(pt) != "plain" {
			t.Fatalf("opened %q", pt)
		}
	})
}

// FuzzPlaintext: what an envelope holds, once opened.
func FuzzPlaintext(f *testing.F) {
	f.Add([]byte(`{"body":{"a":1},"links":[{"rel":"about","to":"x"}]}`))
	f.Add([]byte(`{"body":null}`))
	f.Add([]byte(`{"body":1,"links":{"rel":"x"}}`))
	f.Add([]byte(`{"links":[]}`))
	f.Fuzz(func(t *testing.T, pt []byte) {
		o, err := readPlaintext(pt, "b")
		if err != nil {
			checkErr(t, err)
			return
		}
		if o.BadLinks == nil && len(o.Links) > record.MaxLinks {
			t.Fatalf("%d links", len(o.Links))
		}
		// What opened seals again to the same content.
		again, err := Plaintext(o.Content)
		if err != nil {
			t.Fatal(err)
		}
		o2, err := readPlaintext(again, "b")
		if err != nil || len(o2.Links) != len(o.Links) {
			t.Fatalf("%s: %v", again, err)
		}
	})
}

// FuzzBox: a sys.box body a peer sends, opened by its member.
func FuzzBox(f *testing.F) {
	k := keyOf(f, 3)
	m, err := ParseMemberKey(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		f.Fatal(err)
	}
	b, err := NewBox(k, testSpace, testRoot, m.Public())
	if err != nil {
		f.Fatal(err)
	}
	genuine, _ := canonical.Marshal(b.Object())
	f.Add(genuine)
	f.Add(bytes.Replace(genuine, []byte(`"box":"A`), []byte(`"box":"B`), 1))
	f.Add([]byte(`{"member":"` + testRoot + `","to":"` + m.Public().Text() + `","keyId":"` + k.ID() + `","box":"AQ"}`))
	f.Add([]byte(`{"member":1,"to":2,"keyId":3,"box":4}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := canonical.Parse(data)
		if err != nil {
			return
		}
		box, err := ParseBox(v)
		if err != nil {
			checkErr(t, err)
			return
		}
		got, err := box.Open(m, testSpace)
		if err != nil {
			checkErr(t, err)
			return
		}
		if !got.Equal(k) {
			t.Fatal("a box opened to another key")
		}
	})
}

// FuzzKeyChange: a sys.key body a peer sends, opened by a reader holding
// its key.
func FuzzKeyChange(f *testing.F) {
	first, next := keyOf(f, 4), keyOf(f, 5)
	c, err := NewKeyChange(testSpace, first.ID(), next, []*Key{first})
	if err != nil {
		f.Fatal(err)
	}
	genuine, _ := canonical.Marshal(c.Object())
	f.Add(genuine)
	f.Add([]byte(`{"keyId":"` + next.ID() + `","readKey":"` + testRoot + `","earlier":"AQ"}`))
	f.Add([]byte(`{"keyId":"` + next.ID() + `"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := canonical.Parse(data)
		if err != nil {
			return
		}
		kc, err := ReadKeyChange(v)
		if err != nil {
			checkErr(t, err)
			return
		}
		r, _ := NewKeyring(testSpace, first.ID())
		r.Offer(next)
		if err := r.Take(kc); err != nil {
			checkErr(t, err)
			if len(r.Keys()) != 0 {
				t.Fatal("a key was taken from a change that failed")
			}
			return
		}
		if _, ok := r.First(); !ok {
			t.Fatal("a key was taken without K₀")
		}
	})
}

// FuzzInviteKey: an invite's key.
func FuzzInviteKey(f *testing.F) {
	k := keyOf(f, 6)
	genuine, _ := canonical.Marshal(InviteKey{Key: k}.Object())
	f.Add(genuine)
	f.Add([]byte(`{"keyId":"x","key":"y"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := canonical.Parse(data)
		if err != nil {
			return
		}
		got, err := ParseInviteKey(v)
		if err != nil {
			checkErr(t, err)
			return
		}
		if got.ID() == "" || !ValidKeyID(got.ID()) {
			t.Fatal("a key without an id")
		}
	})
}

// FuzzOpenFile: any sealed file a peer or a blob store hands over opens to
// the file sealed, or is refused with a known code — never a panic, and
// never bytes other than the file's.
func FuzzOpenFile(f *testing.F) {
	k := keyOf(f, 1)
	ring, _ := NewKeyring(testSpace, k.ID())
	ring.Offer(k)
	data := bytes.Repeat([]byte("0123456789"), FileChunk/10+20)
	genuine := SealFile(k, testSpace, data)
	f.Add(genuine)
	f.Add(SealFile(k, testSpace, nil))
	f.Add(genuine[:FileHead+sealedChunk])
	f.Add(genuine[:FileOverhead])
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ring.OpenFile(b)
		if err != nil {
			checkErr(t, err)
			return
		}
		if !bytes.Equal(b, genuine) && len(got) > 0 && !bytes.Equal(got, data) {
			t.Fatalf("opened %d bytes that were never sealed", len(got))
		}
	})
}

// FuzzFileOpenerReadAt: a sealed file a peer or a blob store hands over,
// read at any offset as a reader asks for a range (docs/api.md, Range),
// gives the genuine file's bytes there or a typed error — never a panic,
// never bytes that were not sealed, never more than asked.
func FuzzFileOpenerReadAt(f *testing.F) {
	k := keyOf(f, 1)
	data := bytes.Repeat([]byte("0123456789"), FileChunk/10+20)
	genuine := SealFile(k, testSpace, data)
	f.Add(genuine, int64(0), uint32(100))
	f.Add(genuine, int64(FileChunk-5), uint32(10))
	f.Add(genuine, int64(len(data)-3), uint32(10))
	f.Add(genuine[:FileHead+sealedChunk], int64(FileChunk), uint32(1))
	f.Add(SealFile(k, testSpace, nil), int64(0), uint32(1))
	f.Add(SealFile(k, testSpace, []byte("short")), int64(2), uint32(2))
	f.Add(genuine[:FileOverhead], int64(-1), uint32(1))
	f.Fuzz(func(t *testing.T, b []byte, off int64, n uint32) {
		o, err := NewFileOpener(k, testSpace, bytesReaderAt(b), int64(len(b)))
		if err != nil {
			checkErr(t, err)
			return
		}
		if o.Size() < 0 || o.Size() > int64(len(b)) {
			t.Fatalf("a sealed file of %d bytes opens to %d", len(b), o.Size())
		}
		p := make([]byte, min(n, 1<<20))
		got, err := o.ReadAt(p, off)
		if got < 0 || got > len(p) {
			t.Fatalf("read %d bytes into %d", got, len(p))
		}
		if err != nil && err != io.EOF {
			checkErr(t, err)
		}
		// Under the genuine file's head (its salt), only its own chunks
		// open, each at its own place: what reads is the file's.
		if got > 0 && bytes.Equal(b[:FileHead], genuine[:FileHead]) {
			if off < 0 || off+int64(got) > int64(len(data)) || !bytes.Equal(p[:got], data[off:off+int64(got)]) {
				t.Fatalf("%d bytes at %d that were never sealed there", got, off)
			}
		}
	})
}
