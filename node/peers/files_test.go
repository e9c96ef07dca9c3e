package peers_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/transport"
)

const (
	tFileWant   = 0x08
	tFileData   = 0x09
	tFileCredit = 0x0A
	tFileStop   = 0x0B
)

func noise(n int, seed int64) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// attach writes a file on n and a version of the space naming it.
func (n *tnode) attach(spaceID string, data []byte) (node.FileRef, string) {
	n.t.Helper()
	ctx := context.Background()
	f, err := n.PutFile(ctx, spaceID, data)
	if err != nil {
		n.t.Fatal(err)
	}
	v, err := n.Put(ctx, spaceID, "app.photo", map[string]any{"t": f.Hash}, &node.PutOptions{Files: []node.FileRef{f}})
	if err != nil {
		n.t.Fatal(err)
	}
	return f, v.ID
}

func (n *tnode) holds(hash canonical.ID) bool {
	held, err := n.Store().HasFile(context.Background(), hash)
	return err == nil && held
}

// Files the versions name travel with them, both ways, those written
// before the link and after, and arrive whole.
func TestFilesTravelBetweenPeers(t *testing.T) {
	a, b := newNode(t, nil), newNode(t, nil)
	g := shared(t, a, b)
	big := noise(9<<20+123, 1)
	fBig, _ := a.attach(g.ID, big)
	ca, cb, _ := pair(t, a, b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.peers.Serve(ctx, cb, false, "accept")
	go a.peers.Serve(ctx, ca, true, "dial")
	fSmall, _ := b.attach(g.ID, []byte("from b, live"))
	eventually(t, 20*time.Second, "the files reach the other node", func() bool { return b.holds(fBig.Hash) && a.holds(fSmall.Hash) })
	got, err := b.File(ctx, g.ID, fBig.Hash)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("b reads other bytes (%v)", err)
	}
	if got, err := a.File(ctx, g.ID, fSmall.Hash); err != nil || string(got) != "from b, live" {
		t.Fatalf("a reads %q (%v)", got, err)
	}
}

// With --files none a node fetches no file unasked; one a reader asks for
// is fetched.
func TestFilePolicyNoneFetchesAsked(t *testing.T) {
	a, b := newNode(t, nil), newNode(t, &peers.Options{Files: peers.FilePolicy{None: true}})
	g := shared(t, a, b)
	one, _ := a.attach(g.ID, noise(200<<10, 2))
	two, _ := a.attach(g.ID, noise(300<<10, 3))
	ca, cb, _ := pair(t, a, b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.peers.Serve(ctx, cb, false, "accept")
	go a.peers.Serve(ctx, ca, true, "dial")
	eventually(t, 10*time.Second, "the versions reach b", func() bool { return len(b.export(g.ID)) == len(a.export(g.ID)) })
	time.Sleep(2500 * time.Millisecond)
	if b.holds(one.Hash) || b.holds(two.Hash) {
		t.Fatal("b fetched a file unasked under --files none")
	}
	if ok, err := b.WantFile(ctx, g.ID, two.Hash); err != nil || !ok {
		t.Fatalf("WantFile: %v %v", ok, err)
	}
	eventually(t, 10*time.Second, "the file asked for reaches b", func() bool { return b.holds(two.Hash) })
	if b.holds(one.Hash) {
		t.Fatal("b fetched a file nobody asked for")
	}
	if p, err := peers.ParseFilePolicy("under:8MiB"); err != nil || p.Under != 8<<20 {
		t.Fatalf("under:8MiB reads as %+v (%v)", p, err)
	}
	for _, bad := range []string{"some", "under:", "under:-1", "under:0", "under:9999999999GiB"} {
		if _, err := peers.ParseFilePolicy(bad); err == nil {
			t.Errorf("--files %s is taken", bad)
		}
	}
}

// fileWant reads a FILE-WANT's body.
func fileWant(t *testing.T, body []byte) (file, version canonical.ID, size, offset, credit uint64) {
	t.Helper()
	if len(body) < 64 {
		t.Fatalf("a FILE-WANT of %d bytes", len(body))
	}
	copy(file[:], body)
	copy(version[:], body[32:])
	rest := body[64:]
	var vals [3]uint64
	for i := range vals {
		v, n := binary.Uvarint(rest)
		if n <= 0 {
			t.Fatal("a FILE-WANT's uvarints")
		}
		vals[i], rest = v, rest[n:]
	}
	return file, version, vals[0], vals[1], vals[2]
}

func fileData(sid uint64, file canonical.ID, off int, data []byte) []byte {
	return wire(tFileData, sid, file[:], uv(off), data)
}

// victim is b holding a's version naming a file it does not hold (it
// fetches none unasked) and no link to a; its reader then asks for it.
func victim(t *testing.T, data []byte) (a, b *tnode, spaceID string, f node.FileRef) {
	a, b = newNode(t, nil), newNode(t, &peers.Options{Files: peers.FilePolicy{None: true}})
	g := shared(t, a, b)
	f, _ = a.attach(g.ID, data)
	ca, cb, _ := pair(t, a, b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go b.peers.Serve(ctx, cb, false, "accept")
	go a.peers.Serve(ctx, ca, true, "dial")
	eventually(t, 10*time.Second, "the versions reach b", func() bool { return len(b.export(g.ID)) == len(a.export(g.ID)) })
	cancel()
	ca.Close()
	cb.Close()
	if ok, err := b.WantFile(context.Background(), g.ID, f.Hash); err != nil || !ok {
		t.Fatalf("WantFile: %v %v", ok, err)
	}
	return a, b, g.ID, f
}

// partialLen is how many bytes of the file b holds aside; -1 while a
// transfer writes it.
func partialLen(t *testing.T, b *tnode, f node.FileRef) int64 {
	p, err := b.Store().OpenPartial(context.Background(), f)
	if errors.Is(err, engine.ErrFileBusy) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	return p.Offset()
}

// A peer asked for a file that sends wrong bytes, more bytes than the
// credit or the size, bytes unasked, or a truncated file: refused at the
// check or the bound, the session ended where the wire is broken, and
// nothing kept but a checked file; a truncated file resumes from another
// peer where it stopped.
func TestHostileFileHolder(t *testing.T) {
	data := noise(3<<20+5, 4)
	t.Run("wrong bytes", func(t *testing.T) {
		_, b, sp, f := victim(t, data)
		h := newHostile(t, b, nil)
		h.send(negOpen(t, 1, sp, nil))
		file, _, size, off, credit := fileWant(t, h.until(tFileWant, 1))
		if file != f.Hash || size != uint64(f.Size) || off != 0 || credit != size {
			t.Fatalf("FILE-WANT %s size %d offset %d credit %d", file, size, off, credit)
		}
		wrong := bytes.Clone(data)
		wrong[len(wrong)-1] ^= 1
		for o := 0; o < len(wrong); o += 256 << 10 {
			h.send(fileData(1, file, o, wrong[o:min(o+256<<10, len(wrong))]))
		}
		eventually(t, 5*time.Second, "b checks the file and lets its bytes go", func() bool { return partialLen(t, b, f) == 0 })
		if b.holds(f.Hash) {
			t.Fatal("b kept bytes that do not hash to the file")
		}
	})
	t.Run("endless", func(t *testing.T) {
		_, b, sp, f := victim(t, data)
		h := newHostile(t, b, nil)
		h.send(negOpen(t, 1, sp, nil))
		file, _, _, _, credit := fileWant(t, h.until(tFileWant, 1))
		if credit != uint64(len(data)) {
			t.Fatalf("a credit of %d for a file of %d", credit, len(data))
		}
		endless := append(bytes.Clone(data), noise(1<<20, 9)...)
		for o := 0; o < len(endless); o += 256 << 10 {
			if h.send(fileData(1, file, o, endless[o:min(o+256<<10, len(endless))])) != nil {
				break
			}
		}
		if code, _ := h.negErr(1); code != peers.CodeFileFlood {
			t.Fatalf("bytes past the size: %s", code)
		}
		if b.holds(f.Hash) || partialLen(t, b, f) > int64(len(data)) {
			t.Fatal("b kept bytes past the size")
		}
	})
	t.Run("unasked", func(t *testing.T) {
		_, b, sp, _ := victim(t, data)
		h := newHostile(t, b, nil)
		h.send(negOpen(t, 1, sp, nil))
		h.until(tFileWant, 1)
		other := canonical.IDOf([]byte("never asked"))
		h.send(fileData(1, other, 0, []byte("endless")))
		if code, _ := h.negErr(1); code != peers.CodeFileFlood {
			t.Fatalf("a file not asked for: %s", code)
		}
	})
	t.Run("truncated, then resumed from an honest peer", func(t *testing.T) {
		a, b, sp, f := victim(t, data)
		h := newHostile(t, b, nil)
		h.send(negOpen(t, 1, sp, nil))
		file, _, _, _, _ := fileWant(t, h.until(tFileWant, 1))
		half := 512<<10 + 77
		h.send(fileData(1, file, 0, data[:256<<10]))
		h.send(fileData(1, file, 256<<10, data[256<<10:half]))
		h.send(wire(tFileStop, 1, file[:], []byte(`{"code":"file/not-held","message":"the file is not held here"}`)))
		eventually(t, 10*time.Second, "b keeps the partial file", func() bool { return partialLen(t, b, f) == int64(half) })
		h.c.Close()
		ca, cb, _ := pair(t, a, b, nil)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go b.peers.Serve(ctx, cb, false, "accept")
		go a.peers.Serve(ctx, ca, true, "dial")
		eventually(t, 10*time.Second, "the file resumes from a", func() bool { return b.holds(f.Hash) })
		if got, err := b.Store().File(ctx, f.Hash); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("the resumed file reads other bytes (%v)", err)
		}
	})
}

// A peer asking for a file names a version of the session's space naming
// it: a file of a space it may not read, named by that space's version,
// gets the same file/not-held as a file that is nowhere.
func TestFileWantOutsideTheSpace(t *testing.T) {
	ctx := context.Background()
	n := newNode(t, nil)
	pub, err := n.CreateSpace(ctx, "public", nil)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := n.CreateSpace(ctx, "private", &node.CreateOptions{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	fPub, vPub := n.attach(pub.ID, []byte("public bytes"))
	fPriv, vPriv := n.attach(priv.ID, []byte("private bytes"))
	h := newHostile(t, n, nil)
	h.send(negOpen(t, 1, pub.ID, nil))
	want := func(f node.FileRef, v string) []byte {
		ver, _ := canonical.ParseID(v)
		return wire(tFileWant, 1, f.Hash[:], ver[:], uv(int(f.Size)), uv(0), uv(1<<20))
	}
	h.send(want(fPriv, vPriv))
	stop := h.until(tFileStop, 1)
	if !bytes.Contains(stop, []byte(`"code":"file/not-held"`)) {
		t.Fatalf("a file of a space the peer may not read: %s", stop)
	}
	h.send(want(fPriv, vPub))
	if stop2 := h.until(tFileStop, 1); !bytes.Equal(stop2[32:], stop[32:]) {
		t.Fatalf("the answers differ, telling something: %s vs %s", stop2, stop)
	}
	h.send(want(fPub, vPub))
	if got := h.until(tFileData, 1); !bytes.HasSuffix(got, []byte("public bytes")) {
		t.Fatalf("the public file: %q", got)
	}
}

// attachMany writes files on n, concurrently, and versions of the space
// naming them, 50 a version; it returns the files and, for each, the
// version naming it.
func (n *tnode) attachMany(spaceID string, datas [][]byte) ([]node.FileRef, []string) {
	n.t.Helper()
	ctx := context.Background()
	refs := make([]node.FileRef, len(datas))
	errs := make(chan error, len(datas))
	sem := make(chan struct{}, 8)
	for i, d := range datas {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			f, err := n.PutFile(ctx, spaceID, d)
			refs[i] = f
			errs <- err
		}()
	}
	for range datas {
		if err := <-errs; err != nil {
			n.t.Fatal(err)
		}
	}
	vers := make([]string, len(datas))
	for i := 0; i < len(refs); i += 50 {
		j := min(i+50, len(refs))
		v, err := n.Put(ctx, spaceID, "app.photo", map[string]any{"from": i}, &node.PutOptions{Files: refs[i:j]})
		if err != nil {
			n.t.Fatal(err)
		}
		for k := i; k < j; k++ {
			vers[k] = v.ID
		}
	}
	return refs, vers
}

// More small files than a connection carries at once, and a large one,
// all travel: small transfers go many to a round trip, each file checked
// and kept.
func TestManySmallFilesTravel(t *testing.T) {
	a, b := newNode(t, nil), newNode(t, nil)
	g := shared(t, a, b)
	var datas [][]byte
	for i := range peers.MaxSmallTransfers + 44 {
		datas = append(datas, noise(1+i*37%4096, int64(100+i)))
	}
	datas = append(datas, noise(peers.SmallFile, 7), noise(peers.SmallFile+1, 8), noise(3<<20, 9))
	refs, _ := a.attachMany(g.ID, datas)
	ca, cb, _ := pair(t, a, b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.peers.Serve(ctx, cb, false, "accept")
	go a.peers.Serve(ctx, ca, true, "dial")
	eventually(t, 60*time.Second, "every file reaches b", func() bool {
		for _, f := range refs {
			if !b.holds(f.Hash) {
				return false
			}
		}
		return true
	})
	for i, f := range refs {
		if got, err := b.Store().File(ctx, f.Hash); err != nil || !bytes.Equal(got, datas[i]) {
			t.Fatalf("file %d reads other bytes (%v)", i, err)
		}
	}
}

// A peer asking for more transfers than a connection carries is refused
// with sync/file-flood: a ninth large one, and past MaxSmallTransfers small
// ones while it reads nothing of what they answer (the holder sends what
// its send queue and the link take, and the rest wait unopened).
func TestFileTransfersBounded(t *testing.T) {
	const sendQueue = 64 << 10
	n := newNode(t, &peers.Options{Limits: &peers.Limits{SendQueue: sendQueue}})
	floods := floodsSent(n)
	sp, want := offerFiles(t, n)
	t.Run("large", func(t *testing.T) {
		h := newHostile(t, n, nil)
		h.send(negOpen(t, 1, sp, nil))
		for i := range peers.MaxFileTransfers + 1 {
			// A byte of credit: each stays in flight.
			h.send(want(smallAsks+i, 1))
		}
		if code, msg := h.negErr(1); code != peers.CodeFileFlood || !strings.Contains(msg, fmt.Sprint(peers.MaxFileTransfers)) {
			t.Fatalf("a ninth large transfer: %s %s", code, msg)
		}
	})
	t.Run("small", func(t *testing.T) {
		h := newHostile(t, n, nil)
		h.send(negOpen(t, 1, sp, nil))
		floodSmall(t, floods, h, want, 0)
		// A peer slow to read still learns why its session ended: the
		// NEG-ERR waits SlowAfter (30 s here) for it, not a second.
		time.Sleep(2 * time.Second)
		// Read now: the NEG-ERR comes behind what the node sent before
		// it, and that is no more than its send queue, the link's buffer
		// and the frame the peer's reader holds.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var served int
		for {
			b, err := h.c.Recv(ctx)
			if err != nil {
				t.Fatalf("waiting for the NEG-ERR: %v", err)
			}
			if b[0] == tFileData {
				served += len(b)
				continue
			}
			if b[0] != tNegErr || b[1] != 1 {
				continue
			}
			var e struct{ Code, Message string }
			if err := json.Unmarshal(b[2:], &e); err != nil {
				t.Fatal(err)
			}
			if e.Code != peers.CodeFileFlood || !strings.Contains(e.Message, fmt.Sprint(peers.MaxSmallTransfers)) {
				t.Fatalf("small transfers past the bound: %s %s", e.Code, e.Message)
			}
			break
		}
		const linkBuffer = 256 << 10 // the in-memory link's default
		if most := sendQueue + linkBuffer + 2*(16<<10+64); served > most {
			t.Fatalf("the node sent %d bytes of files to a peer reading nothing; at most %d fit where they wait", served, most)
		}
		t.Logf("%d bytes of the %d files asked were sent before the NEG-ERR", served, smallAsks)
	})
	t.Run("unread", func(t *testing.T) {
		// A peer that never reads the NEG-ERR ending its session is not
		// left connected: past SlowAfter its connection ends.
		n := newNode(t, &peers.Options{Limits: &peers.Limits{SendQueue: sendQueue, SlowAfter: 3 * time.Second}})
		floods := floodsSent(n)
		sp, want := offerFiles(t, n)
		h := newHostile(t, n, nil)
		// The node's answers first fill the link, so the NEG-ERR cannot
		// be written: more files than the send queue and the link hold.
		h.send(negOpen(t, 1, sp, nil))
		for i := range 32 {
			h.send(want(i, 16<<10))
		}
		eventually(t, time.Minute, "the node's answers to fill the link", func() bool {
			_, full := h.link.Full()
			return full
		})
		floodSmall(t, floods, h, want, 32)
		// Within SlowAfter and some, well before the transport's
		// WriteTimeout (60 s) would end it for a frame it cannot write.
		eventually(t, 30*time.Second, "the node to end the connection of a peer that does not read", func() bool {
			conns, _ := sessionsOf(n, h.self.DID())
			return conns == 0
		})
		var err error
		for err == nil {
			_, err = h.c.Recv(context.Background())
		}
		if c := transport.Code(err); c != peers.CodeSlow && c != transport.CodeBroken {
			t.Fatalf("the connection ended with %v", err)
		}
	})
}

// smallAsks is how many small files offerFiles offers: more than a
// connection may have in flight, and more besides than a node sends into
// a send queue and link that nobody reads.
const smallAsks = peers.MaxSmallTransfers + 64

// offerFiles attaches smallAsks small files and then MaxFileTransfers+1
// large ones to a new space of n, and returns the space and a FILE-WANT
// for session 1 of the i'th of them.
func offerFiles(t *testing.T, n *tnode) (space string, want func(i, credit int) []byte) {
	t.Helper()
	sp, err := n.CreateSpace(context.Background(), "files", nil)
	if err != nil {
		t.Fatal(err)
	}
	var datas [][]byte
	for i := range smallAsks {
		datas = append(datas, noise(16<<10, int64(1000+i)))
	}
	for i := range peers.MaxFileTransfers + 1 {
		datas = append(datas, noise(peers.SmallFile+1, int64(2000+i)))
	}
	refs, vers := n.attachMany(sp.ID, datas)
	return sp.ID, func(i, credit int) []byte {
		ver, _ := canonical.ParseID(vers[i])
		return wire(tFileWant, 1, refs[i].Hash[:], ver[:], uv(int(refs[i].Size)), uv(0), uv(credit))
	}
}

// floodsSent counts the NEG-ERRs sync/file-flood n is about to send, as
// it ends the session: whether the peer reads them or not.
func floodsSent(n *tnode) *atomic.Int64 {
	var floods atomic.Int64
	peers.TraceSent(n.peers, func(msg []byte) {
		if msg[0] == tNegErr && bytes.Contains(msg, []byte(peers.CodeFileFlood)) {
			floods.Add(1)
		}
	})
	return &floods
}

// floodSmall asks, in session 1, for every small file from the from'th
// on, reading nothing, and returns once the node ends the session with
// sync/file-flood (floods counts it). A peer reading as the node answers
// would have each served as it comes, never many in flight at once; one
// that does not read has the node serve what its send queue and the link
// take, some 20 files, while the rest wait unopened, in flight, until
// the 257th.
func floodSmall(t *testing.T, floods *atomic.Int64, h *hostile, want func(i, credit int) []byte, from int) {
	t.Helper()
	before := floods.Load()
	for i := from; i < smallAsks; i++ {
		// They fit in the link: the sends do not wait for the node.
		if err := h.send(want(i, 16<<10)); err != nil {
			t.Fatalf("ask %d: %v", i, err)
		}
	}
	eventually(t, time.Minute, "the node to end the session with sync/file-flood", func() bool { return floods.Load() > before })
}

// A holder sends within the credit however it comes: an asker granting
// less than a chunk at a time, in odd amounts, gets the file's bytes in
// order, each FILE-DATA at the next offset and within what was granted.
func TestFileServedWithinSmallCredit(t *testing.T) {
	n := newNode(t, nil)
	sp, err := n.CreateSpace(context.Background(), "files", nil)
	if err != nil {
		t.Fatal(err)
	}
	data := noise(2<<20+12345, 11)
	f, v := n.attach(sp.ID, data)
	file := f.Hash
	ver, _ := canonical.ParseID(v)
	h := newHostile(t, n, nil)
	h.send(negOpen(t, 1, sp.ID, nil))
	const grant = 300_001
	h.send(wire(tFileWant, 1, file[:], ver[:], uv(len(data)), uv(0), uv(grant)))
	var got []byte
	unreceived := grant
	for len(got) < len(data) {
		body := h.until(tFileData, 1)
		if !bytes.Equal(body[:32], file[:]) {
			t.Fatal("FILE-DATA of another file")
		}
		off, k := binary.Uvarint(body[32:])
		chunk := body[32+k:]
		if off != uint64(len(got)) {
			t.Fatalf("FILE-DATA at %d; %d bytes came before", off, len(got))
		}
		if len(chunk) == 0 || len(chunk) > unreceived {
			t.Fatalf("FILE-DATA of %d bytes with %d of credit", len(chunk), unreceived)
		}
		got = append(got, chunk...)
		unreceived -= len(chunk)
		if unreceived == 0 && len(got) < len(data) {
			more := min(grant, len(data)-len(got))
			unreceived = more
			h.send(wire(tFileCredit, 1, file[:], uv(more)))
		}
	}
	if !bytes.Equal(got, data) {
		t.Fatal("the bytes sent are not the file's")
	}
}

// A file's chunks count in the connection's RecvQueue, at the memory each
// holds (its whole receive buffer), until the writer has written them: a
// holder sending into a node whose disk takes no writes fills the bound
// and no more, its sends then wait on the link, and once the disk takes
// them the file is kept and the bound is free again.
func TestStalledFileWriterHoldsTheBound(t *testing.T) {
	data := noise(6<<20, 12)
	_, b, sp, f := victim(t, data)
	resume := peers.StallFileWrites(b.peers)
	defer resume()
	h := newHostile(t, b, nil)
	h.send(negOpen(t, 1, sp, nil))
	file, _, _, _, credit := fileWant(t, h.until(tFileWant, 1))
	if credit != uint64(len(data)) {
		t.Fatalf("a credit of %d for a file of %d", credit, len(data))
	}
	// Chunks of a third of a buffer: counted by their bytes, the bound
	// would take four times as many.
	const chunk = 300_000
	before := h.c.Stats().FramesSent
	go func() {
		for o := 0; o < len(data); o += chunk {
			if h.send(fileData(1, file, o, data[o:min(o+chunk, len(data))])) != nil {
				return
			}
		}
	}()
	// The writer holds the first chunk and two wait behind it: three
	// buffers fit in the bound of 4 MiB, a fourth does not.
	full := int64(3 * transport.FrameBuffer)
	eventually(t, 10*time.Second, "b's RecvQueue fills", func() bool { return peers.RecvHeld(b.peers) == full })
	// The holder's sends stop: nothing more is read.
	sent := int64(-1)
	eventually(t, 10*time.Second, "the holder's sends stop", func() bool {
		was := sent
		time.Sleep(200 * time.Millisecond)
		sent = h.c.Stats().FramesSent - before
		return sent == was
	})
	if held := peers.RecvHeld(b.peers); held != full {
		t.Fatalf("b's RecvQueue counts %d bytes with its writer stalled; want %d, three chunks' buffers", held, full)
	}
	// Past the three counted: one decoded and waiting for room, one read
	// by the transport, and what the link's 256 KiB buffer takes.
	if sent > 3+2+2 {
		t.Fatalf("the holder sent %d chunks into a node that writes none; at most %d", sent, 3+2+2)
	}
	if b.holds(f.Hash) {
		t.Fatal("b holds the file with its writer stalled")
	}
	resume()
	eventually(t, 20*time.Second, "b keeps the file once its disk takes writes", func() bool { return b.holds(f.Hash) })
	eventually(t, 5*time.Second, "b's RecvQueue empties", func() bool { return peers.RecvHeld(b.peers) == 0 })
}

// A partial file already whole (its last bytes came as a transfer ended,
// before it was kept) is checked and kept when next looked for, not asked
// for from its length: a FILE-WANT must ask for a byte at least, and the
// holder ends the connection over one that does not.
func TestWholePartialIsKeptNotAsked(t *testing.T) {
	a, b := newNode(t, nil), newNode(t, nil)
	g := shared(t, a, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	small, _ := a.attach(g.ID, noise(3000, 41))
	large, _ := a.attach(g.ID, noise(3<<20+5, 42))
	for _, f := range []node.FileRef{small, large} {
		stored, err := a.Store().File(ctx, f.Hash)
		if err != nil {
			t.Fatal(err)
		}
		p, err := b.Store().OpenPartial(ctx, engine.FileRef{Hash: f.Hash, Size: int64(len(stored))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write(stored); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	ca, cb, _ := pair(t, a, b, nil)
	go b.peers.Serve(ctx, cb, false, "accept")
	go a.peers.Serve(ctx, ca, true, "dial")
	eventually(t, 20*time.Second, "b keeps the files it had whole", func() bool { return b.holds(small.Hash) && b.holds(large.Hash) })
	select {
	case <-cb.Done():
		t.Fatalf("the connection ended: %v", cb.Err())
	case <-ca.Done():
		t.Fatalf("the connection ended: %v", ca.Err())
	default:
	}
}

// A transfer the asker stopped as stalled, whose holder then sent every
// byte granted and let the stop go unanswered (its part had ended: a
// FILE-STOP for no transfer), is asked for again once the retry wait
// passes: the stop is not remembered past the transfer's last byte.
func TestStoppedTransferIsAskedAgain(t *testing.T) {
	data := noise(300<<10+3, 5)
	_, b, sp, f := victim(t, data)
	peers.SetFileTimes(b.peers, 200*time.Millisecond, 300*time.Millisecond)
	h := newHostile(t, b, nil)
	h.send(negOpen(t, 1, sp, nil))
	file, _, size, off, credit := fileWant(t, h.until(tFileWant, 1))
	if file != f.Hash || off != 0 || credit != size {
		t.Fatalf("FILE-WANT %s offset %d credit %d of %d", file, off, credit, size)
	}
	// Nothing sent: b stops the transfer as stalled.
	stop := h.until(tFileStop, 1)
	if !bytes.Contains(stop, []byte("file/stalled")) {
		t.Fatalf("b's FILE-STOP: %q", stop)
	}
	// Then every byte granted comes, and the stop is never answered.
	for o := 0; o < len(data); o += 64 << 10 {
		h.send(fileData(1, file, o, data[o:min(o+64<<10, len(data))]))
	}
	again, _, _, off, _ := fileWant(t, h.until(tFileWant, 1))
	if again != f.Hash || off != 0 {
		t.Fatalf("asked again for %s from %d", again, off)
	}
	if b.holds(f.Hash) {
		t.Fatal("b kept bytes of a transfer it had stopped")
	}
}

// A transfer whose write failed (a full disk) after every byte of the
// file had come is asked for again once the retry wait passes: the
// holder's part ended with its last byte, so a stop would never be
// answered, and the file must not wait on one for the rest of the
// session.
func TestFailedLastWriteIsAskedAgain(t *testing.T) {
	data := noise(3000, 7)
	_, b, sp, f := victim(t, data)
	peers.SetFileTimes(b.peers, time.Minute, 300*time.Millisecond)
	peers.FailFileWrites(b.peers, 1)
	h := newHostile(t, b, nil)
	h.send(negOpen(t, 1, sp, nil))
	file, _, size, off, credit := fileWant(t, h.until(tFileWant, 1))
	if file != f.Hash || off != 0 || credit != size {
		t.Fatalf("FILE-WANT %s offset %d credit %d of %d", file, off, credit, size)
	}
	// Every byte at once; b's disk fails to take them.
	h.send(fileData(1, file, 0, data))
	again, _, _, off, credit := fileWant(t, h.until(tFileWant, 1))
	if again != f.Hash || credit != size-off {
		t.Fatalf("asked again for %s from %d with credit %d", again, off, credit)
	}
	h.send(fileData(1, file, int(off), data[off:]))
	eventually(t, 10*time.Second, "b keeps the file once its disk takes it", func() bool { return b.holds(f.Hash) })
}

// A pushed VERSIONS whose versions name many files is admitted in parts,
// each batch bounded in weight, and acknowledged once, for all of it:
// the next ADMITTED is the next push's.
func TestHeavyPushAdmittedInPartsAckedOnce(t *testing.T) {
	ctx := context.Background()
	a, c := newNode(t, nil), newNode(t, nil)
	g := shared(t, a, c)
	refs := make([]node.FileRef, 64)
	for i := range refs {
		f, err := a.PutFile(ctx, g.ID, noise(100, int64(i)))
		if err != nil {
			t.Fatal(err)
		}
		refs[i] = f
	}
	raw := func(i int) []byte {
		v, err := a.Put(ctx, g.ID, "app.files", map[string]any{"n": i}, &node.PutOptions{Files: refs})
		if err != nil {
			t.Fatal(err)
		}
		d, err := canonicalDigest(v.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, err := a.Store().VersionJSON(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const n = 100
	var heavy [][]byte
	for i := range n {
		heavy = append(heavy, raw(i))
	}
	if parts := peers.AdmissionParts(heavy); parts < 2 {
		t.Fatalf("%d versions naming 64 files each are admitted in %d batch", n, parts)
	}
	h := newHostile(t, c, nil)
	if err := h.send(negOpen(t, 1, g.ID, nil)); err != nil {
		t.Fatal(err)
	}
	h.until(tNegMsg, 1)
	if err := h.send(versions(2, 1, heavy...)); err != nil {
		t.Fatal(err)
	}
	stored := func() uint64 {
		ack := h.until(0x07, 1)
		s, _ := binary.Uvarint(ack)
		return s
	}
	if got := stored(); got != n {
		t.Fatalf("ADMITTED says %d stored of a push of %d", got, n)
	}
	next := raw(n)
	if err := h.send(versions(2, 1, next)); err != nil {
		t.Fatal(err)
	}
	if got := stored(); got != 1 {
		t.Fatalf("the ADMITTED after the heavy push's says %d stored; the next push brought 1", got)
	}
	for _, r := range append(heavy, next) {
		d, err := canonicalDigest(rawID(t, r))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Store().Standing(ctx, d); err != nil {
			t.Fatalf("a version pushed is not held: %v", err)
		}
	}
}

// rawID is a version's id, read from its JSON.
func rawID(t *testing.T, raw []byte) string {
	t.Helper()
	var v struct{ ID string }
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v.ID
}
