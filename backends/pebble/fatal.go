package pebble

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/minca-go/minca/backends/internal/localstore"
	"github.com/minca-go/minca/engine"
)

// fatal is what the store knows of Pebble failing for good: the first
// failure, kept so that every later call returns it (package doc).
type fatal struct {
	dir  string
	log  *slog.Logger
	err  atomic.Pointer[error]
	once sync.Once
	done chan struct{} // closed at the first failure
}

func newFatal(dir string, log *slog.Logger) *fatal {
	return &fatal{dir: dir, log: log, done: make(chan struct{})}
}

// get is the failure, or nil while there is none.
func (f *fatal) get() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

// set records err unless a failure is already recorded, and returns the
// one recorded.
func (f *fatal) set(err error) error {
	f.once.Do(func() {
		f.err.Store(&err)
		close(f.done)
	})
	return f.get()
}

// fatalPanic unwinds a call of the store from Pebble's Fatalf.
type fatalPanic struct{ err error }

// guard is deferred by every call of the store that enters Pebble: it turns
// a panic on the way — Fatalf's, or Pebble's own on damaged data — into
// the store's failure, returned in *errp.
func (s *Store) guard(errp *error) {
	r := recover()
	if r == nil {
		return
	}
	if fp, ok := r.(fatalPanic); ok {
		*errp = fp.err
		return
	}
	if e, ok := r.(error); ok && errors.Is(e, pebble.ErrClosed) {
		// A call that met the store closing under it (another
		// goroutine's Close; Pebble panics on a closed DB): nothing is
		// damaged, and recording damage would make Close report it.
		*errp = fmt.Errorf("pebble store %s: %w", s.dir, engine.ErrClosed)
		return
	}
	*errp = s.fatal.set(localstore.Corrupt("pebble", s.dir, fmt.Sprintf("Pebble failed reading it: %v", r)))
}

// await runs fn, a call into Pebble that may wait on Pebble's own
// goroutines (a commit, a flush, Close), and returns its error, or the
// store's failure as soon as there is one: a goroutine Fatalf parked would
// make it wait for ever.
func (s *Store) await(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		var err error
		defer func() { done <- err }()
		defer s.guard(&err)
		err = fn()
	}()
	select {
	case err := <-done:
		return err
	case <-s.fatal.done:
		return s.fatal.get()
	}
}

// guarded reports whether the calling goroutine is inside one of the
// store's calls (a method of Store, iter or batch, which defer guard), so
// that a panic there is recovered.
func guarded() bool {
	pkg := reflect.TypeFor[Store]().PkgPath()
	pcs := make([]uintptr, 128)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		fr, more := frames.Next()
		for _, recv := range []string{".(*Store).", ".(*iter).", ".(*batch)."} {
			if strings.HasPrefix(fr.Function, pkg+recv) {
				return true
			}
		}
		if !more {
			return false
		}
	}
}

// logger is Pebble's logger: errors to slog on one line, chatter dropped,
// and a Fatalf that never ends the process.
type logger struct{ f *fatal }

func (l logger) Infof(format string, args ...any) {}

func (l logger) Errorf(format string, args ...any) {
	l.f.log.Error("pebble store "+l.f.dir+": "+localstore.OneLine(fmt.Sprintf(format, args...)), "store", l.f.dir)
}

// Fatalf records the failure (wrapping engine.ErrCorrupt when an argument
// is an error that says damage), then unwinds the store's call it is on,
// or parks Pebble's goroutine for good (package doc).
func (l logger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	err := fmt.Errorf("pebble store %s failed: %s", l.f.dir, localstore.OneLine(msg))
	for _, a := range args {
		if e, ok := a.(error); ok && isDamage(e) {
			err = localstore.Corrupt("pebble", l.f.dir, msg)
			break
		}
	}
	if guarded() {
		panic(fatalPanic{l.f.set(err)})
	}
	// Pebble's goroutine: no call returns the failure now, so it is logged;
	// and the goroutine must not go on, nor can it unwind.
	l.f.log.Error(err.Error(), "store", l.f.dir)
	l.f.set(err)
	select {}
}

func isDamage(err error) bool {
	return pebble.IsCorruptionError(err) || errors.Is(err, fs.ErrNotExist)
}

// listener keeps damage that Pebble finds out of the logs: the error that
// carries it goes to the call that read the damaged data, and what a
// compaction meets shows in VerifyFiles. Other background errors (a write
// that failed) are logged.
func (f *fatal) listener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			if isDamage(err) {
				f.log.Debug("pebble store "+f.dir+": "+localstore.OneLine(err.Error()), "store", f.dir)
				return
			}
			f.log.Error("pebble store "+f.dir+": "+localstore.OneLine(err.Error()), "store", f.dir)
		},
		DataCorruption: func(pebble.DataCorruptionInfo) {},
	}
}
