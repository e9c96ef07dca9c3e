package folder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/minca-go/minca/engine"
)

// Watch implements [engine.BlobWatcher] with fsnotify on the root and every
// directory of ours under it. It is a hint only (F9): events get lost,
// inotify overflows, network mounts send none, and kqueue runs out of
// descriptors. Any of those sends a signal too, so the caller rescans; a
// burst of events sends one. On the in-memory filesystem it returns an
// error, and callers poll.
func (s *Store) Watch(ctx context.Context) (<-chan struct{}, error) {
	if _, ok := s.fs.(OSFS); !ok {
		return nil, errors.New("minca/folder: watching needs the OS filesystem")
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("minca/folder: watch: %w", err)
	}
	add := func(dir string) error { return w.Add(dir) }
	if err := s.addTree(s.root, add); err != nil {
		w.Close()
		return nil, fmt.Errorf("minca/folder: watch %s: %w", s.root, err)
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer w.Close()
		s.watchLoop(ctx, w.Events, w.Errors, ch, func(dir string) { _ = s.addTree(dir, add) })
	}()
	return ch, nil
}

// watchLoop turns watcher events into hints on ch until ctx ends or the
// watcher closes: any number of events make one pending hint; Chmod alone
// (Spotlight, antivirus) makes none; an error (overflow, a lost watch)
// makes one, so the caller rescans (F9). A new directory is watched too.
func (s *Store) watchLoop(ctx context.Context, events <-chan fsnotify.Event, errs <-chan error, ch chan struct{}, newDir func(string)) {
	signal := func() {
		select {
		case ch <- struct{}{}:
		default: // one pending signal stands for any number of events
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Chmod) && !ev.Has(fsnotify.Write) && !ev.Has(fsnotify.Create) {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if e, err := s.fs.Stat(ev.Name); err == nil && e.Dir {
					newDir(ev.Name)
				}
			}
			signal()
		case _, ok := <-errs:
			if !ok {
				return
			}
			signal()
		}
	}
}

// addTree watches dir and the directories of ours under it. Running out of
// watches or descriptors is not fatal: the timer rescans.
func (s *Store) addTree(dir string, add func(string) error) error {
	if err := add(dir); err != nil {
		return err
	}
	es, err := s.fs.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range es {
		if e.Dir && engine.ValidBlobComponent(e.Name) {
			if err := s.addTree(filepath.Join(dir, e.Name), add); err != nil {
				return nil
			}
		}
	}
	return nil
}

// SweepTemp removes this package's own temp files (".minca-….tmp") older
// than age under the root, left by a writer that crashed mid-publish. It
// returns how many it removed. Temp files of sync services are theirs.
func (s *Store) SweepTemp(ctx context.Context, age time.Duration) (int, error) {
	if err := s.check("sweep", ""); err != nil {
		return 0, err
	}
	n := 0
	var sweep func(dir string) error
	sweep = func(dir string) error {
		es, err := s.fs.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		for _, e := range es {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := filepath.Join(dir, e.Name)
			switch {
			case e.Dir && engine.ValidBlobComponent(e.Name):
				if err := sweep(p); err != nil {
					return err
				}
			case !e.Dir && strings.HasPrefix(e.Name, ".minca-") && strings.HasSuffix(e.Name, ".tmp") && time.Since(e.ModTime) > age:
				if err := s.fs.Remove(p); err == nil {
					n++
				}
			}
		}
		return nil
	}
	err := sweep(s.root)
	return n, err
}
