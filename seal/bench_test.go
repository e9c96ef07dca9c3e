package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/record"
)

// The envelope against a bare AES-256-GCM of the same 671 bytes (a
// 600-byte body and a link as {"body", "links"}); `minca bench seal`
// reports the ratio.
func benchPlaintext() []byte { return make([]byte, 671) }

func BenchmarkBareGCMSeal(b *testing.B) {
	k := NewKey()
	block, _ := aes.NewCipher(k.Bytes())
	g, _ := cipher.NewGCM(block)
	pt := benchPlaintext()
	var nonce [12]byte
	out := make([]byte, 0, 1024)
	for b.Loop() {
		rand.Read(nonce[:])
		out = g.Seal(out[:0], nonce[:], pt, nil)
	}
}

func BenchmarkBareGCMOpen(b *testing.B) {
	k := NewKey()
	block, _ := aes.NewCipher(k.Bytes())
	g, _ := cipher.NewGCM(block)
	var nonce [12]byte
	ct := g.Seal(nil, nonce[:], benchPlaintext(), nil)
	out := make([]byte, 0, 1024)
	for b.Loop() {
		out, _ = g.Open(out[:0], nonce[:], ct, nil)
	}
}

func BenchmarkSeal(b *testing.B) {
	k := NewKey()
	pt := benchPlaintext()
	bind := BodyBinding(testSpace, "app.note", "akthxqofxox3iszhpi5j3zhl6a.mfrggzdfmztwq2lknnwg23tpoa")
	out := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		out = k.Seal(out[:0], pt, bind)
	}
}

func BenchmarkOpen(b *testing.B) {
	k := NewKey()
	bind := BodyBinding(testSpace, "app.note", "akthxqofxox3iszhpi5j3zhl6a.mfrggzdfmztwq2lknnwg23tpoa")
	env := k.Seal(nil, benchPlaintext(), bind)
	out := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		out, _ = k.Open(out[:0], env, bind, "x")
	}
}

func benchContent(b *testing.B) collection.Content {
	text := make([]byte, 556)
	for i := range text {
		text[i] = 'a' + byte(i%26)
	}
	return collection.Content{Body: canonical.NewObject("title", "Groceries", "text", string(text), "done", false),
		Links: []record.Link{{Rel: "in", To: "akthxqofxox3iszhpi5j3zhl6a.list"}}}
}

func BenchmarkSealBody(b *testing.B) {
	k := NewKey()
	c := benchContent(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SealBody(k, testSpace, "app.note", "akthxqofxox3iszhpi5j3zhl6a.mfrggzdfmztwq2lknnwg23tpoa", c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenBody(b *testing.B) {
	k := NewKey()
	body, _ := SealBody(k, testSpace, "app.note", "akthxqofxox3iszhpi5j3zhl6a.mfrggzdfmztwq2lknnwg23tpoa", benchContent(b))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := OpenBody(k, testSpace, "app.note", "akthxqofxox3iszhpi5j3zhl6a.mfrggzdfmztwq2lknnwg23tpoa", body); err != nil {
			b.Fatal(err)
		}
	}
}
