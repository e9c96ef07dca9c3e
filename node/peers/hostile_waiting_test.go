package peers_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/internal/race"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

// pusher is a peer over loopback WebSocket that pushes versions into one
// space by hand (docs/sync.md §7), opening a new session when one ends.
type pusher struct {
	t     *testing.T
	url   string
	space string
	c     *transport.Conn
	sid   uint64
	ended map[string]int // sessions ended, by code
}

func newPusher(t *testing.T, url, spaceID string) *pusher {
	p := &pusher{t: t, url: url, space: spaceID, ended: map[string]int{}}
	p.dial()
	return p
}

// patient is how long a step of the test's own peers may take before the
// test fails: a deadline against a hang, not a measure, so generous that a
// loaded machine (a race build among other packages' tests) does not
// cross it. The node's handshake timeout is as long, for the same reason.
const patient = 2 * time.Minute

// dial connects as a throwaway account, and opens a session.
func (p *pusher) dial() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patient)
	defer cancel()
	c, err := transport.Dial(ctx, p.url, &transport.Options{Self: transporttest.Session(p.t), HandshakeTimeout: patient})
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { c.Close() })
	p.c = c
	p.open()
}

func (p *pusher) open() {
	p.t.Helper()
	p.sid++
	if err := p.c.Send(context.Background(), negOpen(p.t, p.sid, p.space, nil)); err != nil {
		p.t.Fatal(err)
	}
	if _, ok := p.await(tNegMsg); !ok {
		p.t.Fatalf("session %d: no NEG-MSG", p.sid)
	}
}

// await reads until a message of type typ for the session, or its end
// (ok false, counted in ended).
func (p *pusher) await(typ byte) ([]byte, bool) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patient)
	defer cancel()
	for {
		b, err := p.c.Recv(ctx)
		if err != nil {
			p.t.Fatalf("session %d waiting for 0x%02x: %v", p.sid, typ, err)
		}
		s, n := binary.Uvarint(b[1:])
		if s != p.sid {
			continue
		}
		switch b[0] {
		case typ:
			return b[1+n:], true
		case tNegErr:
			var e struct{ Code string }
			json.Unmarshal(b[1+n:], &e)
			p.ended[e.Code]++
			return nil, false
		}
	}
}

// push pushes one version and waits for ADMITTED; a session that ends
// instead is opened again, and the version pushed there.
func (p *pusher) push(raw []byte) (later bool) {
	p.t.Helper()
	for {
		if err := p.c.Send(context.Background(), versions(2, p.sid, raw)); err != nil {
			p.t.Fatal(err)
		}
		ack, ok := p.await(0x07)
		if ok {
			return len(ack) > 1 && ack[1] == 1
		}
		p.open()
	}
}

// randomText is n characters of random base64.
func randomText(n int) string {
	b := make([]byte, n*3/4+3)
	rand.Read(b)
	return base64.RawStdEncoding.EncodeToString(b)[:n]
}

// storeBytes is the size of the files under a node's store directory, and
// of its write-ahead logs among them.
func storeBytes(t *testing.T, dir string) (all, logs int64) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				all += fi.Size()
				if strings.HasSuffix(p, ".log") {
					logs += fi.Size()
				}
			}
		}
		return nil
	})
	return all, logs
}

// A throwaway root floods a node over loopback with validly signed edits
// of ~900 KB whose prev and first version exist nowhere: later (02 §9.5),
// never to stand. The node's store grows by at most 64 MiB from 270 MB of
// them, the flooding sessions end with sync/useless, and versions of an
// honest chain that wait from another peer meanwhile survive the flood and
// stand once what they wait for arrives.
func TestHostileWaitingFlood(t *testing.T) {
	a := newNode(t, nil)
	b := &wsNode{tnode: newNode(t, &peers.Options{Transport: &transport.Options{HandshakeTimeout: patient}}), addr: "127.0.0.1:0"}
	b.listen(t)
	t.Cleanup(b.stop)
	g := shared(t, a, b.tnode)
	ctx := context.Background()
	var chain []*record.Version
	for i := range 3 {
		v, err := a.Put(ctx, g.ID, "app.notes", map[string]any{"text": "genuine", "n": i}, &node.PutOptions{Key: "chain"})
		if err != nil {
			t.Fatal(err)
		}
		chain = append(chain, v)
	}
	// Another peer brings b the chain's last two versions, which wait for
	// the first.
	courier := newPusher(t, b.url(), g.ID)
	for _, v := range chain[1:] {
		raw, err := a.Store().VersionJSON(ctx, enginetest.Digest(v))
		if err != nil {
			t.Fatal(err)
		}
		if !courier.push(raw) {
			t.Fatalf("%s did not wait at b", v.ID)
		}
	}
	// Under -short or -race the flood is 14 versions, 12.6 MB: past what
	// one peer may have waiting (8 MiB) and past what a session may leave
	// waiting (MaxUnresolvedBytes), so every bound below is crossed, but
	// smaller than the write-ahead logs Pebble keeps, so the store's
	// growth is measured on the full flood only (270 MB, which took 11
	// minutes under -race on a loaded machine).
	n, size := 300, 900_000
	measure := !testing.Short() && !race.Enabled
	if !measure {
		n = 14
	}
	// Pebble keeps its last write-ahead logs to write into again (its
	// memtables' and as many recycled, 32 MiB each): a store grows by them
	// once, whatever it takes in first. They are filled here, so what is
	// measured is what the flood adds to a store at its steady size.
	dir := filepath.Join(b.Dir(), "store")
	if measure {
		chunk := make([]byte, 8<<20)
		for range 20 {
			if err := b.Store().SetMeta(ctx, "warm", chunk); err != nil {
				t.Fatal(err)
			}
			if err := b.Store().SetMeta(ctx, "warm", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	before, beforeLogs := storeBytes(t, dir)
	w, err := enginetest.NewWriter(g.ID)
	if err != nil {
		t.Fatal(err)
	}
	flood := newPusher(t, b.url(), g.ID)
	var peak, peakLogs int64
	start := time.Now()
	for i := range n {
		a0, err := w.First("app.flood", canonical.NewObject("n", float64(i)))
		if err != nil {
			t.Fatal(err)
		}
		// Random text: nothing on the way compresses it away.
		v, err := w.Next(a0, canonical.NewObject("n", float64(i), "pad", randomText(size)))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := canonical.Marshal(v.Object())
		flood.push(raw)
		if measure {
			all, logs := storeBytes(t, dir)
			if all-before > peak {
				peak, peakLogs = all-before, logs-beforeLogs
			}
		}
	}
	st, err := b.Store().Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d × %d KB in %v: %d waiting (%d bytes), %d dropped; sessions ended %v",
		n, size/1000, time.Since(start).Round(time.Millisecond), st.Waiting, st.WaitingBytes, st.WaitingDropped, flood.ended)
	if measure {
		t.Logf("the store grew by %.1f MiB at most (its logs by %.1f MiB)", float64(peak)/(1<<20), float64(peakLogs)/(1<<20))
	}
	if measure && peak > 64<<20 {
		t.Errorf("the store grew by %d bytes from %d MB of versions that never stand", peak, n*size/1_000_000)
	}
	if st.WaitingBytes > engine.DefaultMaxWaitingBytesPerSource+64<<10 {
		t.Errorf("%d bytes waiting", st.WaitingBytes)
	}
	if st.WaitingDropped == 0 {
		t.Errorf("%d bytes pushed past the bound of %d, and none dropped", n*size, engine.DefaultMaxWaitingBytesPerSource)
	}
	if flood.ended[peers.CodeUseless] == 0 {
		t.Errorf("no flooding session ended with %s: %v", peers.CodeUseless, flood.ended)
	}
	// The chain's first version arrives: the two that waited stand.
	ca, cb, _ := pair(t, a, b.tnode, nil)
	go b.peers.Serve(ctx, cb, false, "accept")
	if _, err := a.peers.Sync(ctx, ca, []string{g.ID}); err != nil {
		t.Fatal(err)
	}
	for _, v := range chain {
		if _, _, err := b.Store().Standing(ctx, enginetest.Digest(v)); errors.Is(err, engine.ErrNotFound) {
			t.Errorf("the genuine version %s is not held after the flood", v.ID)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if cur, err := b.Store().Current(ctx, g.ID, chain[2].Key); err != nil || cur.ID != chain[2].ID {
		t.Errorf("the chain's current version at b: %v", err)
	}
}
