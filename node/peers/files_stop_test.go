package peers_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/minca-go/minca/node/peers"
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
