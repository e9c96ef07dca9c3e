package peers_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/transport"
)

// A stop the holder never answers (neither FILE-STOP nor the bytes it had
// been granted come) ends the session within the stall wait, with a
// code: waited on for ever, the file was never asked of that peer again.
// The next session asks for it again, and a late FILE-DATA of the old
// session's ask is never taken for the new one's bytes.
func TestUnansweredStopEndsTheSession(t *testing.T) {
	data := noise(3000, 11)
	_, b, sp, f := victim(t, data)
	peers.SetFileTimes(b.peers, 200*time.Millisecond, 300*time.Millisecond)
	h := newHostile(t, b, nil)
	h.send(negOpen(t, 1, sp, nil))
	file, _, _, off, _ := fileWant(t, h.until(tFileWant, 1))
	if file != f.Hash || off != 0 {
		t.Fatalf("FILE-WANT %s from %d", file, off)
	}
	// Nothing sent: b stops the transfer as stalled; the stop goes
	// unanswered, as a holder's that never read the FILE-WANT does.
	if stop := h.until(tFileStop, 1); !bytes.Contains(stop, []byte("file/stalled")) {
		t.Fatalf("b's FILE-STOP: %q", stop)
	}
	if code, msg := h.negErr(1); code != peers.CodeFileUnanswered {
		t.Fatalf("an unanswered stop: %s %s", code, msg)
	}
	// The old session's bytes come late, wrong ones: dropped, as for a
	// session not open.
	wrong := bytes.Clone(data)
	wrong[0] ^= 1
	h.send(fileData(1, file, 0, wrong))
	h.send(negOpen(t, 2, sp, nil))
	again, _, size, off, credit := fileWant(t, h.until(tFileWant, 2))
	if again != f.Hash || off != 0 || credit != size {
		t.Fatalf("asked again for %s from %d with credit %d of %d", again, off, credit, size)
	}
	h.send(fileData(2, file, 0, data))
	eventually(t, 10*time.Second, "b keeps the file from the new session", func() bool { return b.holds(f.Hash) })
	if got, err := b.Store().File(t.Context(), f.Hash); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the file reads other bytes (%v)", err)
	}
}

// An opener's first message in a session is its NEG-OPEN, whatever its
// other goroutines queued meanwhile: a FILE-WANT sent before it is a
// message for a session the holder has not opened, dropped there, and
// the file waited on it for the rest of the session (28 files of
// 262,144 were left so when building the sync order took a while).
func TestFileWantWaitsForNegOpen(t *testing.T) {
	data := noise(3000, 12)
	a, b0, sp, f := victim(t, data)
	// b's node served anew, by peers whose test hooks are set before
	// they serve anything.
	p, err := peers.New(peers.NodeHost(b0.Node), &peers.Options{Files: peers.FilePolicy{None: true},
		Transport: &transport.Options{Self: peers.NodeSelf(b0.Node)}, Reopen: 50 * time.Millisecond, Rescan: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b := &tnode{Node: b0.Node, t: t, peers: p, topt: p.TransportOptions()}
	var mu sync.Mutex
	first := map[uint64]byte{} // b's first message of each session
	peers.TraceSent(b.peers, func(msg []byte) {
		sid, _ := binary.Uvarint(msg[1:])
		mu.Lock()
		if _, ok := first[sid]; !ok {
			first[sid] = msg[0]
		}
		mu.Unlock()
	})
	// b's session asks for the file (its FILE-WANT queued, credit
	// granted) before it sends its NEG-OPEN.
	var once atomic.Bool
	peers.BeforeNegOpen(b.peers, func(space string) {
		if space != sp || !once.CompareAndSwap(false, true) {
			return
		}
		// On the session's own goroutine: no t.Fatal here.
		asked := func() bool {
			for _, c := range b.peers.Status() {
				for _, s := range c.Sessions {
					for _, x := range s.Transfers {
						if x.State == "fetching" && x.Credit > 0 {
							return true
						}
					}
				}
			}
			return false
		}
		for deadline := time.Now().Add(10 * time.Second); !asked(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Error("b did not ask for the file while opening")
				return
			}
		}
	})
	ca, cb, _ := pair(t, a, b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.peers.Serve(ctx, ca, false, "accept")
	go b.peers.Serve(ctx, cb, true, "dial")
	eventually(t, 10*time.Second, "b fetches the file", func() bool { return b.holds(f.Hash) })
	mu.Lock()
	defer mu.Unlock()
	for sid, typ := range first {
		if typ != tNegOpen {
			t.Fatalf("b's first message in session %d is 0x%02x, not NEG-OPEN", sid, typ)
		}
	}
}

// A file whose FILE-WANT the holder never read is asked again within the
// stall wait, the stop's wait and the opener's Reopen (under 45 s by
// default, docs/sync.md §7.7): the session ends sync/file-unanswered and the
// opener opens the next at once, not at its next rescan (an hour here).
func TestUnansweredStopIsAskedAgainWithinTheBound(t *testing.T) {
	a := newNode(t, nil)
	b := newNode(t, &peers.Options{Rescan: time.Hour})
	g := shared(t, a, b)
	f, _ := a.attach(g.ID, noise(3000, 12))
	peers.LoseFileWants(a.peers, 1)
	peers.SetFileTimes(b.peers, 500*time.Millisecond, 300*time.Millisecond)
	var ends atomic.Int64
	peers.TraceSent(b.peers, func(msg []byte) {
		if msg[0] == tNegErr && bytes.Contains(msg, []byte(peers.CodeFileUnanswered)) {
			ends.Add(1)
		}
	})
	live(t, b, a) // b opens
	eventually(t, 20*time.Second, "b asks again and holds the file", func() bool { return b.holds(f.Hash) })
	if ends.Load() != 1 {
		t.Fatalf("%d sessions ended %s; want the one whose FILE-WANT was lost", ends.Load(), peers.CodeFileUnanswered)
	}
}

// A stop whose bytes granted all came, short of the file's end, waits for
// the holder's answer before the file is asked again: the holder's part
// was waiting on credit when the stop came, and it answers (file/stopped).
// Asked again first, the late answer was taken for the new ask's and
// cancelled it, and the new ask's bytes ended the session as unasked.
func TestLateStopAnswerIsNotTakenForANewAsk(t *testing.T) {
	data := noise(8<<20+4096, 13)
	_, b, sp, f := victim(t, data)
	peers.SetFileTimes(b.peers, 200*time.Millisecond, 300*time.Millisecond)
	h := newHostile(t, b, nil)
	h.send(negOpen(t, 1, sp, nil))
	file, _, size, off, credit := fileWant(t, h.until(tFileWant, 1))
	if file != f.Hash || off != 0 || credit >= size {
		t.Fatalf("FILE-WANT %s from %d with credit %d of %d; want credit short of the end", file, off, credit, size)
	}
	if stop := h.until(tFileStop, 1); !bytes.Contains(stop, []byte("file/stalled")) {
		t.Fatalf("b's FILE-STOP: %q", stop)
	}
	// The stop is now waited on a minute; the file lacked of late, 300 ms.
	peers.SetFileTimes(b.peers, time.Minute, 300*time.Millisecond)
	sendData := func(from, to int) {
		for at := from; at < to; at += 256 << 10 {
			h.send(fileData(1, file, at, data[at:min(at+256<<10, to)]))
		}
	}
	sendData(0, int(credit)) // every byte granted, after the stop
	// Well past the retry wait and the fetcher's look each second: asked
	// again now, the answer below would cancel that ask.
	time.Sleep(2500 * time.Millisecond)
	h.send(wire(tFileStop, 1, file[:], []byte(`{"code":"file/stopped","message":"stopped as asked"}`)))
	again, _, _, off, credit := fileWant(t, h.until(tFileWant, 1))
	if again != file {
		t.Fatalf("asked for %s", again)
	}
	sendData(int(off), int(off+credit))
	if off+credit < size {
		h.until(tFileCredit, 1)
		sendData(int(off+credit), int(size))
	}
	eventually(t, 10*time.Second, "b keeps the file asked again after the answer", func() bool { return b.holds(f.Hash) })
}
