package record

import (
	"bytes"
	"errors"
	"testing"

	"github.com/minca-go/minca/canonical"
)

// FuzzDecodeVerify: any bytes are either refused with a typed error or
// decode into a version that re-encodes to itself; verifying never panics.
func FuzzDecodeVerify(f *testing.F) {
	f.Add(specVersionJSON(f))
	f.Add([]byte(`{"id":"x","author":"did:key:z","collection":"c","createdAt":"t","key":"k","seq":1,"prev":"p","genesis":"g","bodyHash":"h","signature":"s","log":{"n":1,"prev":"q"},"space":"s"}`))
	f.Add([]byte(`{"id":"x","author":"a","collection":"c","createdAt":"t","key":"k","seq":0,"deleted":true,"body":null,"signature":"s"}`))
	f.Add([]byte(`{"links":[{"rel":"a","to":"b"}],"seen":["x"],"tags":["t"],"retain":true}`))
	f.Add([]byte(`[]`))
	vf := &Verifier{Cache: &VerdictCache{}}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			var r *Refusal
			var ce *canonical.Error
			if !errors.As(err, &r) && !errors.As(err, &ce) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		out, err := v.MarshalJSON()
		if err != nil {
			t.Fatalf("decoded version does not encode: %v", err)
		}
		again, err := Decode(out)
		if err != nil {
			t.Fatalf("re-encoded version refused: %v", err)
		}
		out2, _ := again.MarshalJSON()
		if !bytes.Equal(out, out2) {
			t.Fatal("encoding not stable")
		}
		if err := vf.Verify(v); err != nil {
			var r *Refusal
			if !errors.As(err, &r) {
				t.Fatalf("untyped verify error %T", err)
			}
		}
		_ = v.Stub()
		_, _ = Fork(v, again)
		_, _ = Break(v, again)
		_ = CheckChain(again, v)
	})
}
