package peers

import (
	"bytes"
	"encoding/json"

	"testing"

	"github.com/minca-go/minca/canonical"
)

// FuzzDecode: whatever a peer sends, decode returns a message or a typed
// error naming the rule, never panics, and what it returns encodes back
// to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add(encodeNegOpen(1, &openParams{Space: "bspace", Collections: []string{"app.chat"}, Live: true}, []byte{0x61}))
	f.Add(encodeNegMsg(2, []byte{0x61, 0x00}))
	f.Add(encodeNegClose(3))
	f.Add(encodeNegErr(4, CodeNotHeld, notHeld))
	f.Add(encodeWant(5, wantKept, make([]canonical.ID, 2)))
	vb := newVersionsBuilder(6, 1<<20)
	vb.add([]byte(`{"id":"x"}`))
	f.Add(vb.take(versLast))
	f.Add(encodeAdmitted(7, admitted{Stored: 3, Refused: 1}))
	f.Add([]byte{0x06, 0x01, 0x02, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decode(b)
		if err != nil {
			if _, ok := err.(*wireError); !ok {
				t.Fatalf("an error of type %T", err)
			}
			return
		}
		var again []byte
		switch m.typ {
		case msgNegMsg:
			again = encodeNegMsg(m.sid, m.body)
		case msgNegClose:
			again = encodeNegClose(m.sid)
		case msgWant:
			again = encodeWant(m.sid, m.flag, m.ids)
		case msgAdmitted:
			again = encodeAdmitted(m.sid, m.counts)
		case msgVersions:
			vb := newVersionsBuilder(m.sid, 1<<30)
			for _, v := range m.versions {
				vb.add(v)
			}
			again = vb.take(m.flag)
		default:
			return // JSON members may be written differently
		}
		// A uvarint may be written long; the canonical form is shorter.
		if len(again) > len(b) || (len(again) == len(b) && !bytes.Equal(again, b)) {
			t.Fatalf("%x decodes and encodes as %x", b, again)
		}
	})
}

// FuzzMembers: the top-level scan agrees with a JSON decoder on what it
// reads, and never panics.
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"body":{"space":"x","a":[1,"}"]},"collection":"app.chat","space":"bsp"}`))
	f.Add([]byte(`{"space":"a\"b"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sp, coll, ok := members(b, "space", "collection")
		if !ok {
			return
		}
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			return // the scan reads only what the store keeps; junk it may pass over
		}
		if s, _ := m["space"].(string); s != sp {
			t.Fatalf("space %q, the decoder reads %q", sp, s)
		}
		if c, _ := m["collection"].(string); c != coll {
			t.Fatalf("collection %q, the decoder reads %q", coll, c)
		}
	})
}
