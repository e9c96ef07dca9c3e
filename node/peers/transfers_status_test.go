package peers_test

import (
	"context"
	"testing"
	"time"

	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

// transfersOf is what b's status lists of its sessions' transfers in
// space sp, over every connection.
func transfersOf(b *tnode, sp string) []peers.TransferStatus {
	var out []peers.TransferStatus
	for _, c := range b.peers.Status() {
		for _, s := range c.Sessions {
			if s.Space == sp {
				out = append(out, s.Transfers...)
			}
		}
	}
	return out
}

// stalledHolder is b (over loopback WebSocket) wanting a's file, which a
// peer dialling b holds: it opens a session, is asked for the file, and
// sends its first half bytes, then nothing. b fetches no file unasked,
// and a is gone before the holder comes.
func stalledHolder(t *testing.T, data []byte, half int, stall time.Duration) (b *wsNode, h *hostile, sp string, f node.FileRef) {
	a := newNode(t, nil)
	b = &wsNode{tnode: newNode(t, &peers.Options{Files: peers.FilePolicy{None: true}, Transport: &transport.Options{HandshakeTimeout: patient}}), addr: "127.0.0.1:0"}
	b.listen(t)
	t.Cleanup(b.stop)
	// The retry wait outlasts the test: a stopped transfer is not asked
	// again meanwhile.
	peers.SetFileTimes(b.peers, stall, time.Hour)
	g := shared(t, a, b.tnode)
	f, _ = a.attach(g.ID, data)
	ca, cb, _ := pair(t, a, b.tnode, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go b.peers.Serve(ctx, cb, false, "accept")
	go a.peers.Serve(ctx, ca, true, "dial")
	eventually(t, patient, "the versions reach b", func() bool { return len(b.export(g.ID)) == len(a.export(g.ID)) })
	cancel()
	ca.Close()
	cb.Close()
	if ok, err := b.WantFile(context.Background(), g.ID, f.Hash); err != nil || !ok {
		t.Fatalf("WantFile: %v %v", ok, err)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), patient)
	defer dcancel()
	self := transporttest.Session(t)
	c, err := transport.Dial(dctx, b.url(), &transport.Options{Self: self, HandshakeTimeout: patient})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h = &hostile{t: t, c: c, self: self}
	h.send(negOpen(t, 1, g.ID, nil))
	file, _, size, off, credit := fileWant(t, h.until(tFileWant, 1))
	if file != f.Hash || size != uint64(len(data)) || off != 0 || credit != size {
		t.Fatalf("FILE-WANT %s size %d offset %d credit %d", file, size, off, credit)
	}
	for o := 0; o < half; o += 64 << 10 {
		h.send(fileData(1, file, o, data[o:min(o+64<<10, half)]))
	}
	return b, h, g.ID, f
}

// A session's status lists a file transfer in hand — its file, the bytes
// come so far of its size, the credit still out, its state — while the
// holder has stopped sending mid-file, and the transfer leaves the list
// once it ends: whole and kept, or stopped as stalled and answered (the
// holder then listed as lacking it, until the retry wait passes).
func TestStatusListsFileTransfers(t *testing.T) {
	data := noise(1<<20+13, 11)
	half := 512<<10 + 77
	// fetching is b's transfer as its status lists it, once the first
	// half has come and been written.
	fetching := func(t *testing.T, b *wsNode, sp string, f node.FileRef) {
		t.Helper()
		var xs []peers.TransferStatus
		eventually(t, patient, "b's status lists the first half come", func() bool {
			xs = transfersOf(b.tnode, sp)
			return len(xs) == 1 && xs[0].Next == int64(half)
		})
		x := xs[0]
		if x.File != f.Hash.String() || x.State != "fetching" || x.Size != int64(len(data)) || x.Credit != int64(len(data)-half) || x.Idle < 0 {
			t.Fatalf("the stalled transfer listed as %+v; want file %s fetching, %d of %d bytes, %d credit out", x, f.Hash, half, len(data), len(data)-half)
		}
	}
	t.Run("whole", func(t *testing.T) {
		b, h, sp, f := stalledHolder(t, data, half, patient)
		fetching(t, b, sp, f)
		for o := half; o < len(data); o += 64 << 10 {
			h.send(fileData(1, f.Hash, o, data[o:min(o+64<<10, len(data))]))
		}
		eventually(t, patient, "b keeps the file", func() bool { return b.holds(f.Hash) })
		eventually(t, patient, "the transfer leaves b's status", func() bool { return len(transfersOf(b.tnode, sp)) == 0 })
	})
	t.Run("stopped as stalled", func(t *testing.T) {
		// The stall is measured from the last FILE-DATA: long enough
		// that the first check sees the transfer still fetching.
		b, h, sp, f := stalledHolder(t, data, half, 2*time.Second)
		fetching(t, b, sp, f)
		h.until(tFileStop, 1)
		// Stopped, it is listed twice: the bytes granted that may still
		// come, and the holder lacking it until the retry wait passes.
		xs := transfersOf(b.tnode, sp)
		if len(xs) != 2 || xs[0].File != f.Hash.String() || xs[0].State != "lacked" ||
			xs[1].File != f.Hash.String() || xs[1].State != "stopping" || xs[1].Credit != int64(len(data)-half) {
			t.Fatalf("after b stopped the stalled transfer its status lists %+v; want %s lacked, and stopping with %d bytes that may still come", xs, f.Hash, len(data)-half)
		}
		h.send(wire(tFileStop, 1, f.Hash[:], []byte(`{"code":"file/stalled","message":"stopped"}`)))
		eventually(t, patient, "the answered stop leaves b's status", func() bool {
			xs = transfersOf(b.tnode, sp)
			return len(xs) == 1
		})
		if xs[0].File != f.Hash.String() || xs[0].State != "lacked" {
			t.Fatalf("after the holder answered the stop b's status lists %+v; want %s lacked only", xs, f.Hash)
		}
		if b.holds(f.Hash) {
			t.Fatal("b holds a file it has half of")
		}
	})
}
