package carrier_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/carry"
	"github.com/minca-go/minca/engine/enginetest"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/klauspost/compress/zstd"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/backends/s3"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/carrier"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/store"
	"github.com/minca-go/minca/transport"
)

var ctx = context.Background()

const (
	// The markers share no four bytes with each other or with what else a
	// store holds, so a compressor that copies repeats (Pebble's blocks)
	// keeps each whole where it is.
	secretMarker = "Xq9vK2mZpL7wR4tNj8"
	publicMarker = "Hb3YcT6dGs5fWu1eVa"
	chatDef      = `{"name":"app.chat","version":1,"schema":{"type":"object"},"topics":["channel"]}`
)

// rings is the keys a node holds: one ring a space.
type rings map[string]*seal.Keyring

func (r rings) Keyring(id string) *seal.Keyring { return r[id] }

// writer signs versions of one space by hand, as a member's node would
// write them (a node of this tree does not write private spaces yet).
type writer struct {
	t     testing.TB
	g     *space.Genesis
	top   map[string]*record.Version // by key
	logs  map[string]*record.Version // by author and collection
	clock int
}

func (w *writer) write(by identity.Signer, coll, key string, body any, seen []*record.Version, opts ...func(*record.Draft)) *record.Version {
	w.t.Helper()
	w.clock++
	d := &record.Draft{Space: w.g.ID, Collection: coll, CreatedAt: time.Date(2026, 1, 1, 0, 0, w.clock, 0, time.UTC), Key: key,
		After: w.top[key], Log: record.LogAfter(w.logs[by.DID()+coll]), Retain: space.IsAccessCollection(coll), Body: body}
	for _, v := range seen {
		d.Seen = append(d.Seen, v.ID)
	}
	for _, f := range opts {
		f(d)
	}
	v, err := d.Sign(by)
	if err != nil {
		w.t.Fatal(err)
	}
	w.top[key], w.logs[by.DID()+coll] = v, v
	return v
}

// scene is an account's home node, with a public and a private space, and
// a carrier it added.
type scene struct {
	t       *testing.T
	acc     *identity.PrivateKey
	home    *node.Node
	homeDir string
	ring    *seal.Keyring
	pub     *space.Genesis
	priv    *space.Genesis
	k0      *seal.Key
	c       *carrier.Carrier
	copts   *carrier.Options
	added   *node.CarryAdded
	grant   *connect.CarryGrant
}

func newScene(t *testing.T, copts *carrier.Options) *scene {
	t.Helper()
	s := &scene{t: t, k0: seal.NewKey(), homeDir: t.TempDir()}
	var err error
	if s.acc, err = identity.GenerateKey(); err != nil {
		t.Fatal(err)
	}
	if s.priv, err = space.NewGenesis(space.GenesisOptions{Name: "diary", Private: true, Founders: []string{s.acc.DID()},
		Roles: map[string][]space.Grant{"writer": {space.MustGrant("/record")}}, CreatedAt: "2026-01-01T00:00:00.000Z",
		Nonce: "diary", EncryptionKeyID: s.k0.ID()}); err != nil {
		t.Fatal(err)
	}
	s.ring, _ = seal.NewKeyring(s.priv.ID, s.k0.ID())
	s.ring.Offer(s.k0)
	s.openHome()
	if s.pub, err = s.home.CreateSpace(ctx, "club", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.home.JoinGenesis(ctx, s.priv); err != nil {
		t.Fatal(err)
	}
	if copts == nil {
		copts = &carrier.Options{}
	}
	s.copts = copts
	if s.copts.Dir == "" {
		s.copts.Dir = t.TempDir()
	}
	s.openCarrier()
	if s.added, err = s.home.AddCarrier(ctx, s.c.DID(), "server"); err != nil {
		t.Fatal(err)
	}
	s.grant = &connect.CarryGrant{DID: s.acc.DID(), Name: "Ada", Space: s.added.Space, Invite: s.added.Invite}
	if err := s.c.Accept(ctx, s.grant); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *scene) openHome() {
	s.t.Helper()
	n, err := node.Open(ctx, &node.Options{Dir: s.homeDir, Store: "pebble:" + filepath.Join(s.homeDir, "store"), Account: s.acc,
		PassKeys: rings{s.priv.ID: s.ring}})
	if err != nil {
		s.t.Fatal(err)
	}
	s.home = n
	s.t.Cleanup(func() { n.Close() })
}

func (s *scene) openCarrier() {
	s.t.Helper()
	c, err := carrier.Open(ctx, s.copts)
	if err != nil {
		s.t.Fatal(err)
	}
	s.c = c
	s.t.Cleanup(func() { c.Close() })
}

// carry hands the carrier every version the home holds of each space it
// holds, until it holds no new space: what sync sessions will do.
func (s *scene) carry() {
	s.t.Helper()
	done := map[string]int{}
	for {
		more := false
		for _, id := range spacesOf(s.c) {
			n := push(s.t, s.home.Store(), s.c, id)
			if n != done[id] {
				more = true
			}
			done[id] = n
		}
		if !more {
			return
		}
	}
}

func push(t testing.TB, from *engine.Store, c *carrier.Carrier, id string) int {
	t.Helper()
	var vs []*record.Version
	for v, err := range from.Export(ctx, id) {
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if len(vs) > 0 {
		if _, err := c.Admit(ctx, "home", vs); err != nil {
			t.Fatal(err)
		}
	}
	return len(vs)
}

// privateVersions writes the private space as its members would: Ben
// joins as a writer, Ada defines app.chat (sealed, with a topic), both
// write, Ada removes Ben, and Ben writes once more as of before his
// removal (withdrawn everywhere).
func (s *scene) privateVersions() (honest []*record.Version, benMsg *record.Version) {
	t := s.t
	ben, _ := identity.GenerateKey()
	w := &writer{t: t, g: s.priv, top: map[string]*record.Version{}, logs: map[string]*record.Version{}}
	sealed := func(k *seal.Key, coll, key string, body any) *canonical.Object {
		b, err := seal.SealBody(k, s.priv.ID, coll, key, collection.Content{Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dv, _ := canonical.Parse([]byte(chatDef))
	def, _ := collection.ParseDefinition(dv)
	tagged := func(body *canonical.Object) func(*record.Draft) {
		ts, err := def.Tags(s.k0.TagKey(), collection.Content{Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return func(d *record.Draft) { d.Tags = ts }
	}
	a1 := w.write(s.acc, "sys.assign", "member:"+record.OwnerPart(ben.DID()), canonical.NewObject("member", ben.DID(), "roles", []any{"writer"}), nil)
	d1 := w.write(s.acc, "sys.collection", "collection:app.chat", sealed(s.k0, "sys.collection", "collection:app.chat", dv), []*record.Version{a1})
	msg := func(by *identity.PrivateKey, text string, seen *record.Version) *record.Version {
		key, _ := record.FreshKey(by.DID())
		body := canonical.NewObject("channel", "home", "text", text)
		return w.write(by, "app.chat", key, sealed(s.k0, "app.chat", key, body), []*record.Version{seen}, tagged(body))
	}
	m1 := msg(s.acc, "milk?", d1)
	m2 := msg(ben, secretMarker, d1)
	keep := canonical.NewObject(ben.DID(), canonical.NewObject("app.chat", 0.0)) // Ada saw m2: it stays
	r1 := w.write(s.acc, "sys.remove", "remove:"+record.OwnerPart(ben.DID()), canonical.NewObject("member", ben.DID(), "keep", keep), []*record.Version{d1})
	late := msg(ben, "one more", d1) // as of before his removal, not kept
	return []*record.Version{a1, d1, m1, m2, r1, late}, m2
}

// admitTo admits versions into a store.
func admitTo(t testing.TB, st *engine.Store, vs []*record.Version) {
	t.Helper()
	if _, err := st.Admit(ctx, "x", vs); err != nil {
		t.Fatal(err)
	}
}

// standings is each version's standing and each record's current version
// in a store, for the versions given.
func standings(t testing.TB, st *engine.Store, vs []*record.Version) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range vs {
		s, _, err := st.Standing(ctx, enginetest.Digest(v))
		if err != nil {
			out[v.ID] = "absent"
		} else {
			out[v.ID] = s.String()
		}
		if cur, err := st.Current(ctx, v.Space, v.Key); err == nil {
			out["current "+v.Key] = cur.ID
		}
	}
	return out
}

// A carrier holds passes from its carry space, judges a private space as a
// keyless peer does, and ends with the same versions and standing as a
// member that reads every body (06 §4.1).
func TestCarrierConvergesWithMembers(t *testing.T) {
	s := newScene(t, nil)
	s.carry()
	for _, id := range []string{s.home.Registry(), s.pub.ID, s.priv.ID} {
		if !slices.Contains(s.c.Carried(), id) {
			t.Fatalf("the carrier does not carry %s after its carry space arrived: %v", id, s.c.Carried())
		}
	}
	rk, ok := s.c.ReadKey(s.priv.ID)
	if !ok || rk.DID() != s.k0.ReadKeyDID() {
		t.Fatalf("the read key the carrier proves for the private space: %v", rk)
	}
	if _, ok := s.c.ReadKey(s.pub.ID); ok {
		t.Fatal("a read key for a public space")
	}

	vs, _ := s.privateVersions()
	// A member reading every body.
	j := judge.NewPrivateJudge(&identity.Checker{}, rings{s.priv.ID: s.ring})
	member, err := engine.Open(memory.Open(nil), &engine.Options{Judge: j, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	j.Source = member
	if err := judge.AddGenesis(ctx, member, s.priv); err != nil {
		t.Fatal(err)
	}
	admitTo(t, member, vs)
	// The carrier takes them in any order, a few at a time.
	r := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		shuffled := slices.Clone(vs)
		r.Shuffle(len(shuffled), func(i, k int) { shuffled[i], shuffled[k] = shuffled[k], shuffled[i] })
		for i := 0; i < len(shuffled); i += 2 {
			if _, err := s.c.Admit(ctx, "peer", shuffled[i:min(i+2, len(shuffled))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, got := standings(t, member, vs), standings(t, s.c.Store(), vs)
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("the carrier and a member differ:\nmember  %v\ncarrier %v", want, got)
	}
	if got[vs[5].ID] != engine.Withdrawn.String() || got[vs[3].ID] != engine.Stands.String() {
		t.Fatalf("the scene did not exercise a withdrawal: %v", got)
	}
	// It takes in nothing of a space it does not carry.
	other := &writer{t: t, g: mustGenesis(t, s.acc, "elsewhere"), top: map[string]*record.Version{}, logs: map[string]*record.Version{}}
	v := other.write(s.acc, "app.note", "x", canonical.NewObject("a", 1.0), nil)
	outs, err := s.c.Admit(ctx, "peer", []*record.Version{v})
	if err != nil || outs[0].Verdict != engine.Refused || outs[0].Refusal.Code != carrier.CodeNotCarried {
		t.Fatalf("a version of a space not carried: %+v %v", outs, err)
	}
}

func mustGenesis(t testing.TB, acc *identity.PrivateKey, name string) *space.Genesis {
	g, err := space.NewGenesis(space.GenesisOptions{Name: name, Founders: []string{acc.DID()}, CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: name})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// readable is what bytes hold as a reader of the store sees them: the
// bytes themselves; for each zstd frame they hold (a mirror's segments are
// compressed, engine/mirror), what it decompresses to; and for a Pebble
// table, its keys and values (its blocks are compressed one by one, so a
// text held once in it need not appear in its bytes).
func readable(b []byte) []byte {
	out := append([]byte{}, b...)
	if r, err := sstable.NewMemReader(b, sstable.ReaderOptions{}); err == nil {
		it, err := r.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
		if err == nil {
			for kv := it.First(); kv != nil; kv = it.Next() {
				v, _, _ := kv.Value(nil)
				out = append(append(out, kv.K.UserKey...), v...)
			}
			it.Close()
		}
		r.Close()
	}
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	for rest := b; ; {
		i := bytes.Index(rest, magic)
		if i < 0 {
			return out
		}
		rest = rest[i:]
		if d, err := zstd.NewReader(bytes.NewReader(rest)); err == nil {
			frame, _ := io.ReadAll(d) // up to where the frame's segment trailer starts
			d.Close()
			out = append(out, frame...)
		}
		rest = rest[len(magic):]
	}
}

// grep reports whether any file under dir holds marker, read as
// readable says.
func grep(t testing.TB, dir, marker string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(readable(b), []byte(marker)) {
			found = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// The carrier's store holds no plaintext of a private space, on a local
// store and on mirrors (a folder: store, an s3:// one), while a public
// space's text is there to find — so the search can find what is there.
func TestCarrierStoreHoldsNoPlaintext(t *testing.T) {
	for _, kind := range []string{"pebble", "folder", "s3"} {
		t.Run(kind, func(t *testing.T) {
			dir, cache := t.TempDir(), t.TempDir()
			o := &carrier.Options{Dir: t.TempDir(), StoreOptions: &store.Options{CacheDir: cache}}
			var bucket *s3mem.Backend
			switch kind {
			case "pebble":
				o.Store = "pebble:" + dir
			case "folder":
				o.Store = "folder:" + dir
			case "s3":
				var url string
				bucket, url = newS3(t)
				o.Store = url
				o.StoreOptions.S3 = &s3.Options{Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""), MaxAttempts: 2}
			}
			s := newScene(t, o)
			s.carry()
			vs, _ := s.privateVersions()
			admitTo(t, s.home.Store(), vs)
			if _, err := s.home.Put(ctx, s.pub.ID, "app.note", map[string]any{"text": publicMarker}, nil); err != nil {
				t.Fatal(err)
			}
			s.carry()
			if st := standings(t, s.c.Store(), vs); st[vs[3].ID] != engine.Stands.String() {
				t.Fatalf("the carrier does not hold the private message: %v", st)
			}
			if err := s.c.Close(); err != nil {
				t.Fatal(err)
			}
			if kind != "s3" && !grep(t, dir, publicMarker) {
				t.Fatalf("the public record's text is not in the %s store: the search there finds nothing", kind)
			}
			found := false
			for _, r := range []string{dir, s.copts.Dir, cache} {
				if grep(t, r, secretMarker) {
					t.Fatalf("plaintext of the private space in the carrier's files under %s", r)
				}
				found = found || grep(t, r, publicMarker)
			}
			if bucket != nil {
				objs := objects(t, bucket)
				if len(objs) == 0 {
					t.Fatal("nothing in the bucket")
				}
				inBucket := false
				for name, b := range objs {
					if bytes.Contains(readable(b), []byte(secretMarker)) {
						t.Fatalf("plaintext of the private space in the bucket's %s", name)
					}
					inBucket = inBucket || bytes.Contains(readable(b), []byte(publicMarker))
				}
				if !inBucket {
					t.Fatal("the public record's text is not in the bucket: the search there finds nothing")
				}
			}
			if !found {
				t.Fatal("the public record's text is nowhere in the carrier's store: the search finds nothing")
			}
		})
	}
}

// newS3 is gofakes3 on loopback with a bucket "bkt", and an s3:// URL to a
// prefix of it.
func newS3(t *testing.T) (*s3mem.Backend, string) {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(be).Server())
	t.Cleanup(srv.Close)
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return be, "s3://bkt/carrier?region=us-east-1&path-style=true&endpoint=" + srv.URL
}

// objects reads every object of the bucket.
func objects(t *testing.T, be *s3mem.Backend) map[string][]byte {
	t.Helper()
	l, err := be.ListBucket("bkt", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, c := range l.Contents {
		o, err := be.GetObject("bkt", c.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(o.Contents)
		o.Contents.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[c.Key] = b
	}
	return out
}

// Wakes (06 §4.4): the account's automations reach the carry space as
// wakes, and the carrier reports a version matching one, from its outside
// alone.
func TestCarrierWakes(t *testing.T) {
	s := newScene(t, nil)
	auto := canonical.NewObject("name", "Ben wrote", "when", canonical.NewObject("query", canonical.NewObject("collection", "app.chat")),
		"spaces", []any{s.priv.ID}, "open", "https://chat.example/diary")
	if err := s.home.PutRegistry(ctx, carry.AutomationCollection, "automation:ben", auto); err != nil {
		t.Fatal(err)
	}
	if err := s.home.RefillCarriers(ctx); err != nil {
		t.Fatal(err)
	}
	sub := s.c.Subscribe(0)
	defer sub.Close()
	s.carry()
	vs, benMsg := s.privateVersions()
	// Ben's message first: it waits for the changes it saw, and wakes the
	// wake once it comes to stand.
	if outs, err := s.c.Admit(ctx, "peer", []*record.Version{benMsg}); err != nil || outs[0].Verdict != engine.Later {
		t.Fatalf("Ben's message alone: %+v %v", outs, err)
	}
	if _, err := s.c.Admit(ctx, "peer", vs); err != nil {
		t.Fatal(err)
	}
	// The same versions again wake nothing more.
	if _, err := s.c.Admit(ctx, "peer", vs); err != nil {
		t.Fatal(err)
	}
	var wakes []carrier.Event
	for {
		select {
		case e := <-sub.C:
			if e.Type == carrier.EventWake {
				wakes = append(wakes, e)
			}
			continue
		case <-time.After(100 * time.Millisecond):
		}
		break
	}
	want := carrier.Event{Type: carrier.EventWake, Account: s.acc.DID(), Space: s.priv.ID, Collection: "app.chat",
		Open: "https://chat.example/diary", Wake: "Ben wrote", Version: benMsg.ID}
	// Ada's own message does not wake it (others), nor does Ben's
	// withdrawn one: one wake, for Ben's message.
	if len(wakes) != 1 || wakes[0] != want {
		t.Fatalf("wakes: %+v\nwant %+v", wakes, want)
	}
}

// "a removal reaches the carrier even when the home closes straight
// after" (06 §4.2): the removal is durable when RemoveCarrier returns, the
// node keeps the carry space among those it serves, and the carrier that
// hears carry:closed forgets the account.
func TestCarrierRemoval(t *testing.T) {
	t.Run("a removal reaches the carrier even when the home closes straight after", func(t *testing.T) {
		s := newScene(t, nil)
		s.carry()
		if len(s.c.Carried()) != 3 {
			t.Fatalf("carried before the removal: %v", s.c.Carried())
		}
		sub := s.c.Subscribe(0)
		defer sub.Close()
		if err := s.home.RemoveCarrier(ctx, s.c.DID()); err != nil {
			t.Fatal(err)
		}
		if err := s.home.Close(); err != nil {
			t.Fatal(err)
		}
		s.openHome() // the home, or any device, later
		ids, err := s.home.CarrySpaceIDs(ctx)
		if err != nil || !slices.Contains(ids, s.added.Space) {
			t.Fatalf("the removed carrier's carry space is not served: %v %v", ids, err)
		}
		push(t, s.home.Store(), s.c, s.added.Space)
		got := map[string]bool{}
		for len(got) < 2 {
			select {
			case e := <-sub.C:
				got[e.Type] = true
			case <-time.After(time.Minute):
				t.Fatalf("events: %v", got)
			}
		}
		if !got[carrier.EventDisconnected] || !got[carrier.EventDropped] {
			t.Fatalf("events: %v", got)
		}
		if len(s.c.Carried()) != 0 || len(s.c.Accounts()) != 0 {
			t.Fatalf("after carry:closed the carrier carries %v for %v", s.c.Carried(), s.c.Accounts())
		}
		// It stays forgotten: opened again, it holds no grant.
		if err := s.c.Close(); err != nil {
			t.Fatal(err)
		}
		s.openCarrier()
		if len(s.c.Accounts()) != 0 || len(spacesOf(s.c)) != 0 {
			t.Fatalf("opened again the carrier holds %v", spacesOf(s.c))
		}
	})
}

// A pass follows the key the account holds: after a key change, the pass
// gives the new key's read key, which the space's key change names.
func TestCarrierPassFollowsKeyChange(t *testing.T) {
	s := newScene(t, nil)
	vs, _ := s.privateVersions()
	admitTo(t, s.home.Store(), vs)
	k1 := seal.NewKey()
	kc, err := seal.NewKeyChange(s.priv.ID, s.k0.ID(), k1, []*seal.Key{s.k0})
	if err != nil {
		t.Fatal(err)
	}
	w := &writer{t: t, g: s.priv, top: map[string]*record.Version{}, logs: map[string]*record.Version{}}
	w.clock = 30
	kv := w.write(s.acc, seal.KeyChangeCollection, seal.KeyChangeKey(k1.ID()), kc.Object(), vs[4:5])
	admitTo(t, s.home.Store(), []*record.Version{kv})
	s.ring.Offer(k1)
	if err := s.ring.Take(kc); err != nil {
		t.Fatal(err)
	}
	if err := s.home.RefillCarriers(ctx); err != nil {
		t.Fatal(err)
	}
	s.carry()
	rk, ok := s.c.ReadKey(s.priv.ID)
	if !ok || rk.DID() != k1.ReadKeyDID() {
		t.Fatalf("after the key change the carrier proves %v, not K₁'s read key %s", rk, k1.ReadKeyDID())
	}
}

func spacesOf(c *carrier.Carrier) []string {
	ids, _ := c.Spaces(ctx)
	return ids
}

// Who may read what from a carrier: its carry space only the account's
// devices; a carried private space its members and keepers; a public one
// anyone; a space it does not hold nobody.
func TestCarrierMayRead(t *testing.T) {
	s := newScene(t, nil)
	s.carry()
	stranger, _ := identity.GenerateKey()
	dev := transport.Peer{DID: "did:key:zDnaeSession", Root: s.acc.DID()}
	other := transport.Peer{DID: stranger.DID(), Root: stranger.DID()}
	keeper := transport.Peer{DID: s.c.DID()} // a carrier: no note, no root
	for _, c := range []struct {
		space string
		peer  transport.Peer
		want  bool
	}{
		{s.added.Space, dev, true}, {s.added.Space, other, false}, {s.added.Space, keeper, false},
		{s.priv.ID, dev, true}, {s.priv.ID, other, false},
		{s.pub.ID, other, true},
		{"bnotheld", dev, false},
	} {
		got, err := s.c.MayRead(ctx, c.space, c.peer)
		if err != nil || got != c.want {
			t.Errorf("MayRead(%s, %s) = %v %v, want %v", c.space, c.peer.DID, got, err, c.want)
		}
	}
}

// pull hands a node every version the carrier holds of a space, as a sync
// session with the carrier would.
func pull(t testing.TB, c *carrier.Carrier, to *node.Node, id string) {
	t.Helper()
	var vs []*record.Version
	for v, err := range c.Store().Export(ctx, id) {
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if len(vs) > 0 {
		if _, err := to.Store().Admit(ctx, "carrier", vs); err != nil {
			t.Fatal(err)
		}
	}
}

// The carrier keeps a private space available between two devices of the
// account that are never online at the same time: the first writes and
// goes away; the second, new, gets the registry and the space from the
// carrier alone, and holds every version with the standing the first gave
// it. (Versions move by store export and import here; the sync sessions
// move them over the network.)
func TestCarrierBetweenDevicesNeverOnlineTogether(t *testing.T) {
	s := newScene(t, nil)
	vs, benMsg := s.privateVersions()
	admitTo(t, s.home.Store(), vs)
	s.carry()
	want := standings(t, s.home.Store(), vs)
	if err := s.home.Close(); err != nil { // the first device goes away
		t.Fatal(err)
	}
	dir := t.TempDir()
	b, err := node.Open(ctx, &node.Options{Dir: dir, Store: "pebble:" + filepath.Join(dir, "store"), Account: s.acc})
	if err != nil {
		t.Fatal(err)
	}
	pull(t, s.c, b, b.Registry())
	if err := b.Close(); err != nil { // opened again, it follows what the registry lists
		t.Fatal(err)
	}
	if b, err = node.Open(ctx, &node.Options{Dir: dir, Account: s.acc}); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	spaces, err := b.Spaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(spaces, func(i node.SpaceInfo) bool { return i.ID == s.priv.ID }) {
		t.Fatalf("the second device does not know the private space from the registry: %+v", spaces)
	}
	pull(t, s.c, b, s.priv.ID)
	if got := standings(t, b.Store(), vs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the second device holds\n%v\nthe first held\n%v", got, want)
	}
	// Ben's message reaches it sealed, and opens with the space's key.
	v, err := b.Store().Version(ctx, enginetest.Digest(benMsg))
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.ring.OpenVersion(v)
	if err != nil || !strings.Contains(fmt.Sprint(o.Body), secretMarker) {
		t.Fatalf("Ben's message on the second device: %v", err)
	}
	// It knows the carrier too, and derives the same carry space.
	cs, err := b.Carriers(ctx)
	if err != nil || len(cs) != 1 || cs[0].Space != s.added.Space || cs[0].DID != s.c.DID() {
		t.Fatalf("the second device's carriers: %+v %v", cs, err)
	}
}
