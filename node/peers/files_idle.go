package peers

import (
	"sync"
	"time"
)

// A live session's fetcher (fetchFiles) ends while nothing is to be
// fetched, and is started again on demand: most live sessions fetch
// nothing for most of their life, and a goroutine waiting costs each its
// stack. One goroutine of the peers waits for what could make work for
// any of them (a version naming a file the store lacks, a reader asking
// for one) and starts their fetchers again.

// fileWaker holds the live sessions whose fetchers ended idle, and runs
// the one goroutine that starts them again.
type fileWaker struct {
	mu     sync.Mutex
	parked map[*session]struct{}
	quit   chan struct{} // the running watcher's: closed when no session is parked; nil: none runs
	// watchers counts the watcher goroutines, for Peers.Close to wait
	// on once no live session is left to park.
	watchers sync.WaitGroup
}

// idleFiles reports whether s has nothing in hand a fetcher must watch:
// no transfer in flight, being kept or stopped, and no file lacked of late
// (asked again once the retry wait passes).
func (s *session) idleFiles() bool {
	s.files.mu.Lock()
	defer s.files.mu.Unlock()
	if len(s.files.fetching) > 0 || len(s.files.stopping) > 0 || len(s.files.keeping) > 0 {
		return false
	}
	retry := time.Duration(s.c.p.fileRetry.Load())
	for _, at := range s.files.lacked {
		if time.Since(at) < retry {
			return false
		}
	}
	return true
}

// park lets s's fetcher end, idle: true when it may return. named and
// wants are the channels it took before its last look for missing files
// found none; either closed since, something came meanwhile and the
// fetcher looks again instead (false). Checked under w.mu, where the
// watcher takes the parked sessions, so no want between the look and
// the park is lost: one before this check closed named or wants, one
// after it closes the watcher's, which were taken before.
func (w *fileWaker) park(s *session, named, wants <-chan struct{}) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if isClosed(named) || isClosed(wants) || s.ctx.Err() != nil {
		return false
	}
	if w.parked == nil {
		w.parked = map[*session]struct{}{}
	}
	w.parked[s] = struct{}{}
	if w.quit == nil {
		// The watcher waits on this fetcher's channels: taken before this
		// park, they are closed by anything that came after it.
		w.quit = make(chan struct{})
		w.watchers.Add(1)
		go w.watch(w.quit, named, wants)
	}
	return true
}

// unpark forgets an ended session; the watcher ends with the last.
func (w *fileWaker) unpark(s *session) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.parked, s)
	if len(w.parked) == 0 && w.quit != nil {
		close(w.quit)
		w.quit = nil
	}
}

// watch waits for a version naming a missing file or a reader's want,
// then starts the fetcher of every parked session; each looks again, and
// parks again if it has nothing to fetch.
func (w *fileWaker) watch(quit chan struct{}, named, wants <-chan struct{}) {
	defer w.watchers.Done()
	select {
	case <-named:
	case <-wants:
	case <-quit:
		return
	}
	w.mu.Lock()
	if w.quit != quit {
		// Every session parked with this watcher ended meanwhile.
		w.mu.Unlock()
		return
	}
	ss := w.parked
	w.parked, w.quit = nil, nil
	w.mu.Unlock()
	for s := range ss {
		s.restartFetcher()
	}
}

// restartFetcher starts s's fetcher again, as one of its goroutines,
// unless the session has ended and been released.
func (s *session) restartFetcher() {
	for {
		n := s.running.Load()
		if n == 0 {
			return
		}
		if s.running.CompareAndSwap(n, n+1) {
			break
		}
	}
	go func() {
		defer s.exit()
		s.fetchFiles()
	}()
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
