package peers

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// SetRecheck sets how often p's sending sessions ask again whether their
// peer may read the space (5 s; 0: before every answer and push), so a
// test decides when a revoke or a removal is seen.
func SetRecheck(p *Peers, d time.Duration) { p.recheck = d }

// IndexBuilds is how many sync-order indexes p's sessions have built.
func IndexBuilds(p *Peers) int64 { return p.feeds.builds.Load() }

// StallFileWrites makes p's file writers wait before each write of a
// fetched file's bytes until resume is called: a disk that takes no
// writes. Call it before p serves a connection.
func StallFileWrites(p *Peers) (resume func()) {
	ch := make(chan struct{})
	p.beforeFileWrite = func() error { <-ch; return nil }
	return sync.OnceFunc(func() { close(ch) })
}

// FailFileWrites makes the next n writes of a fetched file's bytes on p
// fail, as a full disk's do. Call it before p serves a connection.
func FailFileWrites(p *Peers, n int) {
	var left atomic.Int64
	left.Store(int64(n))
	p.beforeFileWrite = func() error {
		if left.Add(-1) >= 0 {
			return errors.New("the test's disk takes no more bytes")
		}
		return nil
	}
}

// RecvHeld is the bytes p's connections count in their RecvQueues:
// messages received and not yet handled, file chunks not yet written.
func RecvHeld(p *Peers) (n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.in.mu.Lock()
		n += c.in.used
		c.in.mu.Unlock()
	}
	return n
}

// TraceSent calls f with every message p is about to send, on any
// connection, before it waits to be written. Call it before p serves a
// connection; f must not keep msg.
func TraceSent(p *Peers, f func(msg []byte)) {
	p.trace = func(out bool, msg []byte) {
		if out {
			f(msg)
		}
	}
}

// SetFileTimes sets how long p's sessions wait on a transfer that
// receives nothing before stopping it (30 s), and on a stop left
// unanswered before ending the session (10 s; here stall too), and
// before asking a peer again for a file it lacked or stalled on (30 s).
func SetFileTimes(p *Peers, stall, retry time.Duration) {
	p.fileStall.Store(int64(stall))
	p.fileStopWait.Store(int64(stall))
	p.fileRetry.Store(int64(retry))
}

// LoseFileWants makes p drop the next n FILE-WANTs it receives unread,
// as a holder that never got them. Call it before p serves a connection.
func LoseFileWants(p *Peers, n int) {
	var left atomic.Int64
	left.Store(int64(n))
	p.loseFileWant = func() bool { return left.Add(-1) >= 0 }
}

// AdmissionParts is how many batches a VERSIONS message of raws is
// admitted in.
func AdmissionParts(raws [][]byte) int { return len(splitAdmission(raws)) }

// BeforeNegOpen makes p's opening sessions call f with their space just
// before they send their NEG-OPEN, while their other goroutines run
// (fetching files, pushing): f may wait for what they do meanwhile. Call
// it before p serves a connection.
func BeforeNegOpen(p *Peers, f func(space string)) { p.beforeNegOpen = f }

// FeedCounts is what p's feed of space took of the store's events (ids
// admitted) and what its subscription counted while held; ok false when
// p has no feed of space.
func FeedCounts(p *Peers, space string) (taken uint64, passed int64, ok bool) {
	p.feeds.mu.Lock()
	f := p.feeds.by[space]
	p.feeds.mu.Unlock()
	if f == nil {
		return 0, 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.head, f.sub.Passed(), true
}
