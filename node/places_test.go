package node_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
)

const placesHelperEnv = "MINCA_TEST_PLACES_HELPER"

// signAt signs a version of coll in space at the place the places give,
// and takes it, under their lock.
func signAt(t testing.TB, p *node.Places, k *identity.PrivateKey, spaceID, coll string, i int) *record.Version {
	var v *record.Version
	err := p.Update(func(tx *node.PlaceTxn) error {
		place := tx.Peek(spaceID, coll)
		lo := canonical.NewObject("n", float64(place.N))
		if place.Prev != "" {
			lo.Set("prev", place.Prev)
		}
		var err error
		v, err = record.Sign(canonical.NewObject("space", spaceID, "collection", coll, "createdAt", "2026-09-26T12:00:00.000Z",
			"key", record.OwnerPart(k.DID())+".k"+strconv.Itoa(i)+"x"+strconv.Itoa(os.Getpid()), "seq", 0.0, "log", lo, "body", canonical.NewObject("i", float64(i))), k)
		if err != nil {
			return err
		}
		tx.Take(spaceID, coll, place.N, v.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPlacesHelperProcess is one of the processes of
// TestTwoProcessesWithOneSessionKeyNeverForkItsLine.
func TestPlacesHelperProcess(t *testing.T) {
	dir := os.Getenv(placesHelperEnv)
	if dir == "" {
		t.Skip("run by TestTwoProcessesWithOneSessionKeyNeverForkItsLine")
	}
	k, err := identity.ReadKeyFile(filepath.Join(dir, "session.key"))
	if err != nil {
		t.Fatal(err)
	}
	p := node.OpenPlaces(dir, k.DID())
	for i := range 150 {
		v := signAt(t, p, k, "bspace", "app.chat", i)
		b, _ := v.MarshalJSON()
		fmt.Printf("%s\n", b)
	}
}

// 02 §4.10: two processes signing with one key are one writer, taking
// every place under one lock from one file: the line never forks.
func TestTwoProcessesWithOneSessionKeyNeverForkItsLine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	k, _ := identity.GenerateKey()
	if err := identity.WriteKeyFile(filepath.Join(dir, "session.key"), k); err != nil {
		t.Fatal(err)
	}
	var outs [2]bytes.Buffer
	var cmds [2]*exec.Cmd
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestPlacesHelperProcess$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), placesHelperEnv+"="+dir)
		cmds[i].Stdout = &outs[i]
		cmds[i].Stderr = os.Stderr
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	at := map[int64]*record.Version{}
	for _, out := range outs {
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if !bytes.HasPrefix(sc.Bytes(), []byte("{")) {
				continue
			}
			v, err := record.Decode(sc.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if o := at[v.Log.N]; o != nil {
				t.Fatalf("a fork: %s and %s both at place %d", o.ID, v.ID, v.Log.N)
			}
			at[v.Log.N] = v
		}
	}
	if len(at) != 300 {
		t.Fatalf("%d versions read, want 300", len(at))
	}
	for n := int64(0); n < 300; n++ {
		v := at[n]
		if v == nil {
			t.Fatalf("no version at place %d", n)
		}
		if n > 0 && v.Log.Prev != at[n-1].ID {
			t.Fatalf("a break: place %d names %s, the version at %d is %s", n, v.Log.Prev, n-1, at[n-1].ID)
		}
	}
}

// 02 §4.10: a place is written down before the version signed at it
// leaves: a crash after signing, before storing, never hands it out again.
func TestACrashBetweenSigningAndStoringNeverReusesAPlace(t *testing.T) {
	tn := newNode(t, nil)
	g := tn.space("crash", nil)
	a := put(t, tn, g.ID, "app.chat", obj("t", "a"), nil)
	tn.Close()
	// Another process signs at the next place and dies before storing.
	k, err := identity.ReadKeyFile(filepath.Join(tn.dir, "session.key"))
	if err != nil {
		t.Fatal(err)
	}
	lost := signAt(t, node.OpenPlaces(tn.dir, k.DID()), k, g.ID, "app.chat", 0)
	if lost.Log.N != 1 || lost.Log.Prev != a.ID {
		t.Fatalf("the lost version is at %+v", *lost.Log)
	}
	tn.open(nil)
	b := put(t, tn, g.ID, "app.chat", obj("t", "b"), nil)
	if b.Log.N != 2 || b.Log.Prev != lost.ID {
		t.Fatalf("after the crash the next write is at %+v, want {2 %s}: place 1 was used", *b.Log, lost.ID)
	}
	// A places file restored from an older copy: the store shows the
	// places taken, and the writer moves past them.
	if err := os.Remove(filepath.Join(tn.dir, "places.log")); err != nil {
		t.Fatal(err)
	}
	c := put(t, tn, g.ID, "app.chat", obj("t", "c"), nil)
	if c.Log.N != 3 || c.Log.Prev != b.ID {
		t.Fatalf("with the places forgotten the next write is at %+v, want {3 %s}", *c.Log, b.ID)
	}
}

// A line of the places' log cut short by a crash is of a batch that never
// left: it is cut off, and the places before it stand.
func TestPlacesATornLineIsCutOff(t *testing.T) {
	dir := t.TempDir()
	k, _ := identity.GenerateKey()
	p := node.OpenPlaces(dir, k.DID())
	a := signAt(t, p, k, "bspace", "app.chat", 0)
	f, err := os.OpenFile(filepath.Join(dir, "places.log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"lines":{"bspace\napp.chat":{"n":7,"la`)
	f.Close()
	b := signAt(t, node.OpenPlaces(dir, k.DID()), k, "bspace", "app.chat", 1)
	if b.Log.N != 1 || b.Log.Prev != a.ID {
		t.Fatalf("after a torn line the next place is %+v, want {1 %s}", *b.Log, a.ID)
	}
	// A damaged line that is not the last is refused, not guessed at.
	f, _ = os.OpenFile(filepath.Join(dir, "places.log"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("not json\n{}\n")
	f.Close()
	err = node.OpenPlaces(dir, k.DID()).Update(func(*node.PlaceTxn) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("a damaged log gave %v", err)
	}
}

// Past 1 MiB the log is rewritten as one line; what it says is the same.
func TestPlacesLogIsCompacted(t *testing.T) {
	dir := t.TempDir()
	k, _ := identity.GenerateKey()
	p := node.OpenPlaces(dir, k.DID())
	for batch := range 2 { // two lines of ~0.7 MiB: the second passes 1 MiB
		err := p.Update(func(tx *node.PlaceTxn) error {
			for i := batch * 6000; i < (batch+1)*6000; i++ {
				tx.Take("bspace", "app.c"+strconv.Itoa(i), int64(i), "bid"+strconv.Itoa(i)+strings.Repeat("x", 64))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	info, _ := os.Stat(filepath.Join(dir, "places.log"))
	b, _ := os.ReadFile(filepath.Join(dir, "places.log"))
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Fatalf("the log of %d bytes has %d lines, want the header and one", info.Size(), n)
	}
	lines, err := node.OpenPlaces(dir, k.DID()).Read()
	if err != nil || len(lines["bspace"]) != 12000 || lines["bspace"]["app.c11999"] != 11999 || lines["bspace"]["app.c0"] != 0 {
		t.Fatalf("after compaction: %d lines, %v", len(lines["bspace"]), err)
	}
}

// A place taken with UpdateDeferred is in the log once its sync returns:
// another opening of the places (a restart) never gives it again, and the
// next Update follows it.
func TestDeferredPlacesAreKeptOnceSynced(t *testing.T) {
	dir := t.TempDir()
	p := node.OpenPlaces(dir, "did:key:zDeferred")
	var taken []int64
	for i := range 3 {
		sync, err := p.UpdateDeferred(func(tx *node.PlaceTxn) error {
			place := tx.Peek("bspace", "app.chat")
			tx.Take("bspace", "app.chat", place.N, fmt.Sprintf("id%d", i))
			taken = append(taken, place.N)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := sync(); err != nil {
			t.Fatal(err)
		}
	}
	if taken[0] != 0 || taken[1] != 1 || taken[2] != 2 {
		t.Fatalf("places %v, want 0 1 2", taken)
	}
	again := node.OpenPlaces(dir, "did:key:zDeferred")
	err := again.Update(func(tx *node.PlaceTxn) error {
		if got := tx.Peek("bspace", "app.chat"); got.N != 3 || got.Prev != "id2" {
			t.Fatalf("reopened, the next place is %+v; want 3 after id2", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Places keep their log open between Updates; when another opening (as
// another process would) compacts it, renaming a new file over the one held
// open, or takes places in it, the next Update reads the file at the path
// and never gives a place again — and a deferred sync of a batch appended
// before the rename still succeeds.
func TestPlacesKeptOpenFollowAnotherOpeningsCompaction(t *testing.T) {
	dir := t.TempDir()
	k, _ := identity.GenerateKey()
	a, b := node.OpenPlaces(dir, k.DID()), node.OpenPlaces(dir, k.DID())
	defer a.Close()
	defer b.Close()
	take := func(p *node.Places, coll string) int64 {
		t.Helper()
		var n int64
		if err := p.Update(func(tx *node.PlaceTxn) error {
			n = tx.Peek("bspace", coll).N
			tx.Take("bspace", coll, n, "bid"+strconv.FormatInt(n, 10))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := take(a, "app.chat"); n != 0 {
		t.Fatalf("first place %d, want 0", n)
	}
	sync, err := a.UpdateDeferred(func(tx *node.PlaceTxn) error {
		tx.Take("bspace", "app.chat", tx.Peek("bspace", "app.chat").N, "bid1")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(filepath.Join(dir, "places.log"))
	if err := b.Update(func(tx *node.PlaceTxn) error { // past 1 MiB: compacted
		for i := range 30000 {
			tx.Take("bspace", "app.c"+strconv.Itoa(i), int64(i), "bid"+strconv.Itoa(i))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(filepath.Join(dir, "places.log"))
	if os.SameFile(before, after) {
		t.Fatal("the log was not replaced by the compaction")
	}
	if err := sync(); err != nil {
		t.Fatalf("the deferred sync after another's compaction: %v", err)
	}
	if n := take(a, "app.chat"); n != 2 {
		t.Fatalf("after the compaction, place %d, want 2", n)
	}
	if n := take(b, "app.chat"); n != 3 {
		t.Fatalf("the other opening, place %d, want 3", n)
	}
	if n := take(a, "app.c11999"); n != 12000 {
		t.Fatalf("a line the other took, place %d, want 12000", n)
	}
}
