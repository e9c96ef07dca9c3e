package record

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// replaySigner is the §3.4 example's author, giving the signature the
// example carries: the key itself is not in the spec, only its version.
type replaySigner struct{ did, sig string }

func (s replaySigner) DID() string { return s.did }
func (s replaySigner) Sign([]byte) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(s.sig)
}

var _ identity.Signer = replaySigner{}

// 02 §3.3, §3.4: a draft of the example's members signs to the example
// itself — its signed part, its id and bodyHash to the byte, and its
// signature verifies.
func TestDraftSignsSpecExample34(t *testing.T) {
	want, err := Decode(specVersionJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	at, err := ParseTime(want.CreatedAt)
	if err != nil {
		t.Fatal(err)
	}
	d := &Draft{Space: want.Space, Collection: want.Collection, CreatedAt: at, Key: want.Key,
		Log: Log{N: 0}, Seen: want.Seen, Body: want.Body, Links: want.Links}
	v, err := d.Sign(replaySigner{want.Author, want.Signature})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := v.MarshalJSON()
	exp, _ := want.MarshalJSON()
	if string(got) != string(exp) || v.ID != "bvtkn4kg5z6qhfqvovhxypxvm767aqz6llyd67wztupdwixpfl7xa" {
		t.Fatalf("signed draft\n got %s\nwant %s", got, exp)
	}
	if err := (&Verifier{}).Verify(v); err != nil {
		t.Fatalf("the signed draft does not verify: %v", err)
	}
}

// 02 §3.1, §4.2, §4.4, §4.10: what a draft leaves out and what it derives —
// seq, prev and genesis from the version it follows, log.prev from the
// writer's last place, and a delete with no body, links, files or tags.
func TestDraftMembers(t *testing.T) {
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	key, _ := FreshKey(k.DID())
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first, err := (&Draft{Space: testSpace, Collection: "app.note", CreatedAt: at, Key: key, Body: canonical.NewObject("t", "a")}).Sign(k)
	if err != nil {
		t.Fatal(err)
	}
	if first.Seq != 0 || first.Prev != "" || first.Log == nil || *first.Log != (Log{}) || first.Seen != nil || first.Retain || first.HasLinks || first.HasTags {
		t.Fatalf("first version %+v", first)
	}
	second, err := (&Draft{Space: testSpace, Collection: "app.note", CreatedAt: at, Key: key, After: first, Log: LogAfter(first),
		Seen: []string{first.ID}, Retain: true, Body: canonical.NewObject("t", "b"), Links: []Link{{Rel: "in", To: "list.x"}},
		Files: []File{{Hash: canonical.IDOf([]byte("abc")), Size: 3}}, Tags: []string{"t1"}}).Sign(k)
	if err != nil {
		t.Fatal(err)
	}
	if second.Seq != 1 || second.Prev != first.ID || second.Genesis != first.ID || *second.Log != (Log{N: 1, Prev: first.ID}) ||
		len(second.Seen) != 1 || !second.Retain || len(second.Links) != 1 || len(second.Tags) != 1 {
		t.Fatalf("second version %+v", second)
	}
	if fs, ok := second.obj.Get("files"); !ok || len(fs.([]any)) != 1 {
		t.Fatalf("files %v", fs)
	}
	if len(second.Files) != 1 || second.Files[0] != (File{Hash: canonical.IDOf([]byte("abc")), Size: 3}) {
		t.Fatalf("files read back %+v", second.Files)
	}
	del, err := (&Draft{Space: testSpace, Collection: "app.note", CreatedAt: at, Key: key, After: second, Log: LogAfter(second),
		Deleted: true, Body: "ignored", Links: second.Links, Tags: second.Tags}).Sign(k)
	if err != nil {
		t.Fatal(err)
	}
	if !del.Deleted || del.HasBody || del.HasLinks || del.HasTags || del.Seq != 2 || del.Genesis != first.ID {
		t.Fatalf("delete %+v", del)
	}
	// A loose version (no space) carries no log (02 §3.5).
	if o := (&Draft{Collection: "sys.invitation", Key: key, Body: nil}).Object(); o.Has("log") || o.Has("space") {
		t.Fatalf("loose %v", o)
	}
}

// 02 §2, §3.3: a version's id and log.prev are parsed once, as it is read;
// only an id in its canonical text (lower case) names a digest, and a
// copy whose id is in upper case fails step 1 however it decodes.
func TestDigestsReadWithTheVersion(t *testing.T) {
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	key, _ := FreshKey(k.DID())
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first, err := (&Draft{Space: testSpace, Collection: "app.note", CreatedAt: at, Key: key, Body: "a"}).Sign(k)
	if err != nil {
		t.Fatal(err)
	}
	second, err := (&Draft{Space: testSpace, Collection: "app.note", CreatedAt: at, Key: key, After: first, Log: LogAfter(first), Body: "b"}).Sign(k)
	if err != nil {
		t.Fatal(err)
	}
	signed, _ := second.SignedPart()
	if d, ok := second.Digest(); !ok || d != canonical.IDOf(signed) {
		t.Fatalf("digest %v %v", d, ok)
	}
	if d, ok := second.LogPrevDigest(); !ok || d.String() != first.ID {
		t.Fatalf("log.prev digest %v %v", d, ok)
	}
	if _, ok := first.LogPrevDigest(); ok {
		t.Fatal("a line's first place names no log.prev")
	}
	raw, _ := second.MarshalJSON()
	upper := strings.Replace(string(raw), second.ID, "b"+strings.ToUpper(second.ID[1:]), 1)
	v, err := Decode([]byte(upper))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.Digest(); ok {
		t.Fatal("an id in upper case names a digest")
	}
	if err := (&Verifier{}).Verify(v); err == nil {
		t.Fatal("a copy with its id in upper case verifies")
	}
}

// 02 §3.3, §4.10: a draft made ready before its place is taken
// (Unplaced) presigns at that place to exactly what the draft with that
// Log presigns to — signed part, id and signed version — and only once.
func TestUnplacedAtIsPresign(t *testing.T) {
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	key, _ := FreshKey(k.DID())
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first, err := (&Draft{Space: testSpace, Collection: "app.note", CreatedAt: at, Key: key, Body: canonical.NewObject("t", "a")}).Sign(k)
	if err != nil {
		t.Fatal(err)
	}
	for _, place := range []Log{{}, {N: 7, Prev: first.ID}} {
		d := &Draft{Space: testSpace, Collection: "app.note", CreatedAt: at, Key: key, After: first, Seen: []string{first.ID},
			Body: canonical.NewObject("t", "b"), Tags: []string{"t1"}}
		u, err := d.Unplaced(k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := u.At(place)
		if err != nil {
			t.Fatal(err)
		}
		d.Log = place
		want, err := d.Presign(k)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID() != want.ID() || string(got.payload) != string(want.payload) {
			t.Fatalf("at %+v: unplaced gives %s\n%s\nwant %s\n%s", place, got.ID(), got.payload, want.ID(), want.payload)
		}
		v, err := got.Sign()
		if err != nil {
			t.Fatal(err)
		}
		if v.Log == nil || *v.Log != place || v.Author != k.DID() || v.BodyHash == "" {
			t.Fatalf("at %+v: signed %+v", place, v)
		}
		if err := (&Verifier{}).Verify(v); err != nil {
			t.Fatalf("at %+v: %v", place, err)
		}
		if _, err := u.At(place); err == nil {
			t.Fatal("an unplaced draft presigned twice")
		}
	}
}

// 02 §3.3: a version signed after its provisional form was made is the
// version its members read to, and the provisional keeps its empty
// signature.
func TestSignAfterProvisional(t *testing.T) {
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	key, _ := FreshKey(k.DID())
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first, err := (&Draft{Space: testSpace, Collection: "app.note", CreatedAt: at, Key: key, Body: canonical.NewObject("t", "a")}).Sign(k)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*Draft{
		{Space: testSpace, Collection: "app.note", CreatedAt: at, Key: key, After: first, Seen: []string{first.ID},
			Body: canonical.NewObject("t", "b"), Tags: []string{"t1"}, Log: Log{N: 3, Prev: first.ID}},
		{Space: testSpace, Collection: "app.note", CreatedAt: at, Key: key, After: first, Deleted: true},
	} {
		p, err := d.Presign(k)
		if err != nil {
			t.Fatal(err)
		}
		prov, err := p.Provisional()
		if err != nil {
			t.Fatal(err)
		}
		v, err := p.Sign()
		if err != nil {
			t.Fatal(err)
		}
		if prov.Signature != "" {
			t.Fatalf("the provisional's signature became %q", prov.Signature)
		}
		if s, _ := prov.Object().Get("signature"); s != "" {
			t.Fatalf("the provisional's envelope's signature became %q", s)
		}
		back, err := FromValue(v.Object().Clone())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v, back) {
			t.Fatalf("signed after the provisional:\n%+v\nread from its members:\n%+v", v, back)
		}
		if v.Signature == "" || v.ID != p.ID() {
			t.Fatalf("signed %+v", v)
		}
		if err := (&Verifier{}).Verify(v); err != nil {
			t.Fatal(err)
		}
	}
}
