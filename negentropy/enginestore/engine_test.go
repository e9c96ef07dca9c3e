package enginestore

import (
	"context"
	"testing"
	"time"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/record"
)

const space = "bimjoifogypbqrtuich3e375d67y43znkjsjnp4q4qhe7gwf7u74a"

// A space held by the engine reconciles against a plain Vector of the same
// versions' items: the adapter reads the sync order the engine keeps.
func TestEngineSyncOrder(t *testing.T) {
	ctx := context.Background()
	st, err := engine.Open(memory.Open(nil), &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k, _ := identity.GenerateKey()
	base := time.Date(2026, 9, 26, 12, 0, 0, 0, time.UTC)
	var vs []*record.Version
	want := negentropy.NewVector(0)
	wantChat := negentropy.NewVector(0)
	for i := 0; i < 300; i++ {
		coll := "app.chat"
		if i%3 == 0 {
			coll = "app.todo"
		}
		key, _ := record.FreshKey(k.DID())
		created := record.FormatTime(base.Add(time.Duration(i%50) * time.Second))
		if i == 7 {
			created = "not a time" // sorts as timestamp 0
		}
		o := canonical.NewObject("collection", coll, "createdAt", created, "space", space, "key", key,
			"seq", 0.0, "log", canonical.NewObject("n", float64(i/3*2+i%3), "prev", "p"), "body", canonical.NewObject("i", float64(i)))
		if i/3*2+i%3 == 0 {
			o.Set("log", canonical.NewObject("n", 0.0))
		}
		v, err := record.Sign(o, k)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
		d, _ := v.Digest()
		want.Insert(record.UnixMillis(created), negentropy.ID(d))
		if coll == "app.chat" {
			wantChat.Insert(record.UnixMillis(created), negentropy.ID(d))
		}
	}
	out, err := st.Admit(ctx, "test", vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		if o.Verdict != engine.Stands {
			t.Fatalf("%s: %v %v", o.ID, o.Verdict, o.Refusal)
		}
	}
	want.Seal()
	wantChat.Seal()
	for _, c := range []struct {
		scope Scope
		want  *negentropy.Vector
	}{{Scope{Space: space}, want}, {Scope{Space: space, Collections: []string{"app.chat"}}, wantChat}} {
		got, err := Build(ctx, Engine{Store: st}, c.scope, Options{BlockSize: 16})
		if err != nil {
			t.Fatal(err)
		}
		if got.Size() != c.want.Size() {
			t.Fatalf("%v: %d items, want %d", c.scope.Collections, got.Size(), c.want.Size())
		}
		for _, r := range [][2]int{{0, got.Size()}, {5, 77}, {100, 101}} {
			a, err1 := got.Fingerprint(r[0], r[1])
			b, err2 := c.want.Fingerprint(r[0], r[1])
			if err1 != nil || err2 != nil || a != b {
				t.Fatalf("%v range %v: fingerprints differ (%v, %v)", c.scope.Collections, r, err1, err2)
			}
		}
		// A whole reconciliation against the vector finds nothing to do.
		cl, err := negentropy.NewClient(got, 0)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := cl.Initiate()
		if err != nil {
			t.Fatal(err)
		}
		srv, err := negentropy.NewServer(c.want, 0)
		if err != nil {
			t.Fatal(err)
		}
		for rounds := 0; msg != nil; rounds++ {
			if rounds > 10 {
				t.Fatal("no end")
			}
			ans, err := srv.Reconcile(msg)
			if err != nil {
				t.Fatal(err)
			}
			r, err := cl.Reconcile(ans)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Have)+len(r.Need) != 0 {
				t.Fatalf("equal sets differ: %d have, %d need", len(r.Have), len(r.Need))
			}
			msg = r.Next
		}
	}
}
