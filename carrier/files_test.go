package carrier_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/carrier"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

// link runs sync sessions between two hosts over an in-memory link, a
// dialling b, until the returned stop is called (or the test ends).
func link(t *testing.T, a peers.Host, aSelf transport.Self, b peers.Host, bSelf transport.Self) (stop func()) {
	t.Helper()
	fast := func(h peers.Host, self transport.Self) *peers.Peers {
		p, err := peers.New(h, &peers.Options{Transport: &transport.Options{Self: self}, Reopen: 50 * time.Millisecond, Rescan: 100 * time.Millisecond,
			Logger: testLogger(t).With("self", self.DID())})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pa, pb := fast(a, aSelf), fast(b, bSelf)
	ca, cb, _ := transporttest.Pair(t, pa.TransportOptions(), pb.TransportOptions(), nil)
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	go func() { pb.Serve(sctx, cb, false, "accept"); done <- struct{}{} }()
	go func() { pa.Serve(sctx, ca, true, "dial"); done <- struct{}{} }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		ca.Close()
		cb.Close()
		<-done
		<-done
	}
	t.Cleanup(stop)
	t.Cleanup(func() {
		// Before stop (cleanups run last first): the sessions as a
		// failure left them, with their transfers.
		if t.Failed() {
			for _, p := range []*peers.Peers{pa, pb} {
				j, _ := json.Marshal(p.Status())
				t.Logf("peers status: %s", j)
			}
		}
	})
	return stop
}

// testLogs are each test's peers' logs, at Debug: told when the test
// fails, so a transfer that never ends shows the state it was left in.
var testLogs sync.Map // *testing.T → *slog.Logger

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func testLogger(t *testing.T) *slog.Logger {
	if l, ok := testLogs.Load(t); ok {
		return l.(*slog.Logger)
	}
	buf := &lockedBuffer{}
	l := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	testLogs.Store(t, l)
	t.Cleanup(func() {
		testLogs.Delete(t)
		if t.Failed() {
			buf.mu.Lock()
			t.Logf("the peers' logs:\n%s", buf.b.String())
			buf.mu.Unlock()
		}
	})
	return l
}

// newAccountScene is an account's home node, with its own keys (a
// private space it makes gets a pass), and a carrier it added.
func newAccountScene(t *testing.T, copts *carrier.Options) *scene {
	t.Helper()
	s := &scene{t: t, homeDir: t.TempDir(), copts: copts}
	var err error
	if s.acc, err = identity.GenerateKey(); err != nil {
		t.Fatal(err)
	}
	if s.home, err = node.Open(ctx, &node.Options{Dir: s.homeDir, Store: "pebble:" + filepath.Join(s.homeDir, "store"), Account: s.acc}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.home.Close() })
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

// device opens a new device of the scene's account: a node with the
// account key and nothing else.
func (s *scene) device() *node.Node {
	s.t.Helper()
	dir := s.t.TempDir()
	n, err := node.Open(ctx, &node.Options{Dir: dir, Store: "pebble:" + filepath.Join(dir, "store"), Account: s.acc})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { n.Close() })
	return n
}

// reads waits until n reads data as the file hash of space.
func reads(t *testing.T, n *node.Node, spaceID string, hash canonical.ID, data []byte, who string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := n.File(ctx, spaceID, hash)
		if err == nil {
			if !bytes.Equal(got, data) {
				t.Fatalf("%s reads other bytes as the file", who)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never read the file: %v; %s", who, err, fileState(n, spaceID, hash))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fileState is what n holds of a file of a space and what it needs to
// ask for it and read it: the space's genesis, a version naming the file
// (and whether n opens it, i.e. holds the space's key), the file, its
// partial bytes.
func fileState(n *node.Node, spaceID string, hash canonical.ID) string {
	st := n.Store()
	var b strings.Builder
	_, genesis, err := judge.GenesisOf(ctx, st, spaceID)
	fmt.Fprintf(&b, "genesis held %v (%v)", genesis, err)
	named, ok, err := st.NamingFile(ctx, spaceID, hash)
	fmt.Fprintf(&b, ", a version naming the file held %v (%v)", ok, err)
	if ok {
		v, err := st.Version(ctx, named.Version)
		if err == nil {
			_, err = n.Open(ctx, v)
		}
		fmt.Fprintf(&b, ", it opens (the key held): %v", err)
	}
	held, err := st.HasFile(ctx, hash)
	fmt.Fprintf(&b, ", the file held %v (%v)", held, err)
	stats, err := st.Stats(ctx)
	fmt.Fprintf(&b, ", the store's stats %+v (%v)", stats, err)
	return b.String()
}

// A file attached on node A is read on node B after sync, on a node
// restored from A's backup, and on a device served by a carrier only
// (issue: files end to end); the same in a private space, where the
// carrier's bytes (its directory, its store and that store's files) and
// the backup's bytes hold no plaintext marker, while a public space's
// marker is found there — so the search finds what is there.
func TestFileReachesEveryDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("syncs several nodes and a carrier, a few MiB each")
	}
	for _, private := range []bool{false, true} {
		t.Run(map[bool]string{false: "public", true: "private"}[private], func(t *testing.T) {
			cstore := t.TempDir()
			s := newAccountScene(t, &carrier.Options{Store: "pebble:" + cstore})
			g, err := s.home.CreateSpace(ctx, "album", &node.CreateOptions{Private: private})
			if err != nil {
				t.Fatal(err)
			}
			marker := map[bool]string{false: publicMarker, true: secretMarker}[private]
			// More than a blob store's 4 MiB chunk and a sealed file's
			// 64 KiB piece, the marker straddling neither.
			data := make([]byte, 5<<20+77)
			rand.NewChaCha8([32]byte{9}).Read(data)
			copy(data[1<<20:], marker)
			f, err := s.home.PutFile(ctx, g.ID, data)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.home.Put(ctx, g.ID, "app.photo", map[string]any{"title": "trip"}, &node.PutOptions{Files: []node.FileRef{f}}); err != nil {
				t.Fatal(err)
			}
			if err := s.home.RefillCarriers(ctx); err != nil {
				t.Fatal(err)
			}
			backup := t.TempDir()
			if _, err := s.home.Backup(ctx, "folder:"+backup, nil); err != nil {
				t.Fatal(err)
			}

			// B, another device of the account, over a sync session with A.
			b := s.device()
			stopB := link(t, peers.NodeHost(s.home), peers.NodeSelf(s.home), peers.NodeHost(b), peers.NodeSelf(b))
			reads(t, b, g.ID, f.Hash, data, "B, synced with A")

			// The carrier, from A, until it holds the file; then A goes.
			stopA := link(t, peers.NodeHost(s.home), peers.NodeSelf(s.home), s.c, s.c.Self())
			deadline := time.Now().Add(60 * time.Second)
			for held, _ := s.c.Store().HasFile(ctx, f.Hash); !held; held, _ = s.c.Store().HasFile(ctx, f.Hash) {
				if time.Now().After(deadline) {
					t.Fatalf("the carrier never took the file; it carries %v", s.c.Carried())
				}
				time.Sleep(50 * time.Millisecond)
			}
			// A goes: its sessions end before its store closes (a node's own
			// peers end with it; these are the test's).
			stopA()
			stopB()
			if err := s.home.Close(); err != nil {
				t.Fatal(err)
			}

			// R, restored from A's backup.
			r := s.device()
			if _, err := r.Restore(ctx, "folder:"+backup, nil); err != nil {
				t.Fatal(err)
			}
			reads(t, r, g.ID, f.Hash, data, "R, restored from A's backup")

			// C, a device that meets only the carrier, never A.
			c := s.device()
			link(t, peers.NodeHost(c), peers.NodeSelf(c), s.c, s.c.Self())
			reads(t, c, g.ID, f.Hash, data, "C, served by the carrier only")

			if err := s.c.Close(); err != nil {
				t.Fatal(err)
			}
			for what, dir := range map[string]string{"the carrier's store": cstore, "the carrier's directory": s.copts.Dir, "the backup": backup} {
				if private && grep(t, dir, marker) {
					t.Fatalf("%s holds the private file's plaintext", what)
				}
			}
			for what, dir := range map[string]string{"the carrier's store": cstore, "the backup": backup} {
				if !private && !grep(t, dir, marker) {
					t.Fatalf("%s does not hold the public file's marker: the search there finds nothing", what)
				}
			}
		})
	}
}
