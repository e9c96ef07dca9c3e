package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
)

// FuzzDecodeControl: any bytes decode to a control message or an *Error,
// never a panic; what decodes encodes back to something that decodes the
// same.
func FuzzDecodeControl(f *testing.F) {
	f.Add([]byte(`{"type":"hello","payload":{"v":1,"nonce":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","maxFrame":1048576}}`))
	f.Add([]byte(`{"type":"who","from":null,"payload":{"key":"did:key:zDnae","sig":"AA"}}`))
	f.Add([]byte(`{"type":"bye","payload":{"code":"conn/closed","message":"bye"}}`))
	f.Add([]byte(`{"type":"ping"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeControl(b)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			return
		}
		again, err := decodeControl(encodeControl(c)[1:])
		if err != nil {
			t.Fatalf("re-encoded %+v does not decode: %v", c, err)
		}
		if again.Type != c.Type || again.Code != c.Code || !bytes.Equal(again.Nonce, c.Nonce) || again.Key != c.Key {
			t.Fatalf("round trip changed %+v to %+v", c, again)
		}
	})
}

// FuzzStreamFrames: a stream link reads any byte stream into frames or an
// error, never a panic, never a frame over the limit.
func FuzzStreamFrames(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 1, 'x', 0, 0, 0, 1, 0})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1})
	f.Add([]byte{0, 0, 0, 9, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		l := NewStreamLink(nopCloser{bytes.NewReader(b)})
		for i := 0; i < 1000; i++ {
			fr, err := l.ReadFrame(context.Background(), 64)
			if err != nil {
				return
			}
			if len(fr) == 0 || len(fr) > 64 {
				t.Fatalf("a frame of %d bytes", len(fr))
			}
			if _, err := checkKind(fr); err == nil && fr[0] == kindControl {
				decodeControl(fr[1:])
			}
		}
	})
}

type nopCloser struct{ io.Reader }

func (nopCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopCloser) Close() error                { return nil }

// FuzzDecodeRelay: any bytes decode to a relay message or a relay/shape
// *Error; what decodes encodes back to the same message.
func FuzzDecodeRelay(f *testing.F) {
	f.Add([]byte(`{"type":"join","room":"space1","intro":true}`))
	f.Add([]byte(`{"type":"signal","room":"r","to":"did:key:z","payload":{"kind":"offer","sid":"a","sdp":"v=0"}}`))
	f.Add([]byte(`{"type":"forward","room":"r","payload":"x"}`))
	f.Add([]byte(`{"type":"error","code":"relay/full","message":"m"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeRelay(b)
		if err != nil {
			if Code(err) != CodeRelayShape {
				t.Fatalf("error %v", err)
			}
			return
		}
		again, err := decodeRelay(m.encode())
		var want bytes.Buffer
		json.Compact(&want, m.Payload)
		if err != nil || again.Type != m.Type || again.Room != m.Room || again.To != m.To || !bytes.Equal(again.Payload, want.Bytes()) {
			t.Fatalf("round trip of %+v: %+v, %v", m, again, err)
		}
		if m.Type == relaySignal {
			decodeSignal(m.Payload)
		}
	})
}
