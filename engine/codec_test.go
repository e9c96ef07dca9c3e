package engine

import (
	"bytes"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

func signed(t testing.TB, extra ...any) *record.Version {
	t.Helper()
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	key, _ := record.FreshKey(k.DID())
	o := canonical.NewObject("collection", "app.note", "createdAt", "2026-09-26T12:00:00.000Z", "key", key,
		"seq", float64(0), "space", canonical.IDOf([]byte("s")).String(), "log", canonical.NewObject("n", float64(0)),
		"body", canonical.NewObject("text", "x"))
	for i := 0; i+1 < len(extra); i += 2 {
		o.Set(extra[i].(string), extra[i+1])
	}
	v, err := record.Sign(o, k)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The stored envelope and body join back into exactly the canonical JSON
// of the whole version, whatever members sort around "body" (02 §1), and
// the envelope alone is the stub.
func TestEnvelopeJoinsToCanonical(t *testing.T) {
	for _, extra := range [][]any{
		nil,
		{"a", 1.0, "bo", "x", "body2", true, "bodyHash0", "z"},
		{"retain", true},
		{"\u00e9", "after everything"},
	} {
		v := signed(t, extra...)
		want, _ := canonical.Marshal(v.Object())
		env, body, err := encodeEnvelope(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := joinWhole(env, body)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("joined\n%s\nwant\n%s (%v)", got, want, err)
		}
		stub, _ := canonical.Marshal(v.Stub().Object())
		if got, _ := joinWhole(env, nil); !bytes.Equal(got, stub) {
			t.Fatalf("envelope alone\n%s\nwant the stub\n%s", got, stub)
		}
		h, err := decodeHeld(env, nil)
		if err != nil || h.ID != v.ID || !h.IsStub() || h.Retain != v.Retain {
			t.Fatalf("decodeHeld: %v %+v", err, h)
		}
	}
}

func TestVersionValueRoundTrip(t *testing.T) {
	v := signed(t)
	env, body, _ := encodeEnvelope(v)
	for _, b := range [][]byte{body, nil} {
		e, got, err := splitVersion(versionValue(env, b))
		if err != nil || !bytes.Equal(e, env) || !bytes.Equal(got, b) || (got == nil) != (b == nil) {
			t.Fatalf("%q %q %v", e, got, err)
		}
	}
}

func TestHeadAndHistRoundTrip(t *testing.T) {
	for _, h := range []head{
		{topSeq: 3, top: canonical.IDOf([]byte("a")), topV: 300, firstV: 1 << 40, topH: holding{whole: true, retain: true, bodyLen: 77}, hasFirst: true,
			firstH: holding{whole: true, bodyLen: 2}, firstSeq: 2, first: canonical.IDOf([]byte("b")), firstEnv: []byte{1, '{', '}'},
			firstBody: []byte("{}")},
		{topSeq: 3, top: canonical.IDOf([]byte("a")), topH: holding{whole: true, deleted: true}, hasFirst: true,
			firstH: holding{whole: true, deleted: true}, firstSeq: 3, first: canonical.IDOf([]byte("a")), firstEnv: []byte{1, '{', '}'}},
		{topSeq: 1, top: canonical.IDOf([]byte("c")), topH: holding{}},
		{topSeq: 1, top: canonical.IDOf([]byte("c")), topH: holding{}, num: 1},
		{topSeq: 3, top: canonical.IDOf([]byte("a")), topV: 300, firstV: 1 << 40, topH: holding{whole: true, bodyLen: 77}, hasFirst: true,
			firstH: holding{whole: true, bodyLen: 2}, firstSeq: 2, first: canonical.IDOf([]byte("b")), num: 1<<63 + 5},
	} {
		got, err := decodeHead(h.encode())
		if err != nil || !got.equal(h) {
			t.Fatalf("%+v %v", got, err)
		}
	}
	// A head naming number 0 is one naming none: the flag says which.
	numbered := head{topSeq: 1, top: canonical.IDOf([]byte("c")), num: 7}.encode()
	numbered[1+8+32+8+32] = 0
	if _, err := decodeHead(numbered); err == nil {
		t.Fatal("a head naming number 0 decodes")
	}
	e := histEntry{verdict: Withdrawn, retain: true, deleted: true}
	if got, err := decodeHist(e.encode()); err != nil || got != e {
		t.Fatalf("%+v %v", got, err)
	}
}

// Stored values are read back without panicking, whatever bytes a damaged
// store holds: errors are ErrCorrupt.
func FuzzStoredValues(f *testing.F) {
	v := signed(f)
	env, body, _ := encodeEnvelope(v)
	w := waiting{v: v, from: "peer", root: v.Author, waits: []string{"bx"}, seq: 7}
	wb, _ := w.encode()
	c := counters{changeSeq: 3, stats: Stats{Versions: 2}}
	f.Add(env, body)
	f.Add(wb, []byte(nil))
	f.Add(c.encode(), (head{hasFirst: true, firstEnv: env}).encode())
	f.Add([]byte{0x80}, []byte{1, 2})
	f.Add(versionValue(env, body), vseqValue(7))
	f.Add(fromValue(1767225600000, 912, "did:key:zDnae"), []byte(nil))
	var t tx
	t.change(canonical.IDOf([]byte("a")), Forked, "", nil, Stands, -1)
	t.pend[0].other = canonical.IDOf([]byte("b"))
	entry, _ := t.changeEntry()
	f.Add(entry, []byte("g\x00\x00\x00\x00\x00\x00\x00\x01\x02"))
	f.Add([]byte{0, 1, 0x81, 0x01, 5, 4, 7}, []byte("g\x00\x00\x00\x00\x00\x00\x00\x01\x03"))
	f.Add([]byte("\x00\x00\x00\x00\x01aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\x01"), []byte("g\x00\x00\x00\x00\x00\x00\x00\x01"))
	f.Add(keys.HistoryKey(keys.Rec("s", "k"), 3, 300), keys.HistoryIDKey(keys.Rec("s", "k"), 3, canonical.IDOf([]byte("a")).String()))
	f.Add(keys.HistNumKey(300, 3, 300), keys.HistNumKey(1<<40, 0, 1))
	f.Add((head{num: 300, hasFirst: true, topV: 2, firstV: 2}).encode(), (head{num: 1 << 40}).encode())
	f.Fuzz(func(t *testing.T, a, b []byte) {
		keys.HistoryEntry(a)
		keys.HistoryEntry(b)
		splitVersion(a)
		decodeVseq(b)
		decodeHeld(a, b)
		decodeHeld(a, nil)
		joinWhole(a, b)
		decodeHead(a)
		decodeHist(a)
		decodeWaiting(a)
		decodeFromValue(a)
		decodeCounters(a)
		splitDigests(a)
		readChangeEntry(b, a)
	})
}
