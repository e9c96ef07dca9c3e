package mirror

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/minca-go/minca/engine"
)

// Run mirrors until ctx ends: a round at once, then exports as local
// changes gather, imports when the blob store's watcher hints or its timer
// fires. It returns nil when ctx ends, or the error that stopped it.
//
// A blob store that is gone or looks shrunk (F10; a sync service
// unmounting for seconds, or delivering deletes before what replaces
// them) does not stop it at once: it waits, retrying rounds with backoff
// and saying so on Logger, and stops only when ctx ends or GoneGrace is
// over. Nothing is written, compacted or deleted while it waits. A bad
// segment ([ErrBadSegment]) is logged and Run goes on; it is read again
// later. Anything else stops it.
func (m *Mirror) Run(ctx context.Context) error {
	var hint <-chan struct{}
	if w, ok := m.b.(engine.BlobWatcher); ok {
		if ch, err := w.Watch(ctx); err == nil {
			hint = ch
		} else {
			m.o.Logger.Info("mirror: no watcher; polling", "err", err)
		}
	}
	if err := m.ride(ctx, m.Round(ctx)); err != nil {
		return stopped(ctx, err)
	}
	exportTick := time.NewTicker(m.o.BatchDelay)
	defer exportTick.Stop()
	importTimer := time.NewTimer(jitter(m.o.ImportEvery))
	defer importTimer.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return nil
		case <-hint:
			_, err = m.Import(ctx)
		case <-importTimer.C:
			err = m.Round(ctx)
			importTimer.Reset(jitter(m.o.ImportEvery))
		case <-exportTick.C:
			_, err = m.Export(ctx)
		}
		if err := m.ride(ctx, err); err != nil {
			return stopped(ctx, err)
		}
	}
}

// waitable reports errors Run waits out: the blob store gone, or shrunk
// (unless adopting, which never reports it).
func waitable(err error) bool {
	return errors.Is(err, engine.ErrBlobStoreGone) || errors.Is(err, ErrBlobStoreShrunk)
}

// ride settles an error of one of Run's steps: nil and bad segments go on
// (Import logged them); a waitable error is waited out; anything else is
// returned. It returns nil when ctx ends while waiting.
func (m *Mirror) ride(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrBadSegment) {
		return nil
	}
	if !waitable(err) {
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	start := m.o.Now()
	delay := min(time.Second, m.o.ImportEvery)
	for attempt := 1; ; attempt++ {
		waited := m.o.Now().Sub(start)
		if waited >= m.o.GoneGrace {
			shown := waited.Round(time.Second)
			if waited < time.Second {
				shown = waited.Round(time.Millisecond)
			}
			return fmt.Errorf("gave up after waiting %v for the blob store to come back: %w", shown, err)
		}
		delay = min(delay, m.o.GoneGrace-waited)
		m.o.Logger.Warn("mirror: the blob store is gone or lost segments; waiting for it, writing and deleting nothing",
			"err", err, "attempt", attempt, "retryIn", delay, "waited", waited.Round(time.Millisecond), "givesUpAfter", m.o.GoneGrace)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		err = m.Round(ctx)
		if err == nil || errors.Is(err, ErrBadSegment) {
			m.o.Logger.Info("mirror: the blob store is back", "after", m.o.Now().Sub(start).Round(time.Millisecond))
			return nil
		}
		if !waitable(err) {
			return err
		}
		delay = max(min(2*delay, m.o.ImportEvery), delay)
	}
}

func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// jitter spreads d by ±20% so devices sharing a folder do not rescan in
// step.
func jitter(d time.Duration) time.Duration {
	n, err := rand.Int(rand.Reader, big.NewInt(int64(d)/5*2+1))
	if err != nil {
		return d
	}
	return d - d/5 + time.Duration(n.Int64())
}
