package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
)

// openMirror opens the store at storeURL (judged by judge; nil for verbs
// that admit nothing), the blob store at blobURL (create as openBlobs),
// and a mirror between them, logging to log. done closes the mirror and
// the store.
func openMirror(ctx context.Context, log *slog.Logger, storeURL, blobURL string, create bool, judge engine.Judge, o mirror.Options) (m *mirror.Mirror, done func(), err error) {
	b, err := openBlobs(ctx, blobURL, create, log)
	if err != nil {
		return nil, nil, err
	}
	st, err := openStore(storeURL, judge)
	if err != nil {
		return nil, nil, err
	}
	o.Logger = log
	if m, err = mirror.New(st, b, &o); err != nil {
		st.Close()
		return nil, nil, err
	}
	return m, func() { m.Close(); st.Close() }, nil
}

// everySecond returns a mirror progress callback that calls f at most once
// a second, so a long backup or restore reports without flooding stderr.
func everySecond(f func(mirror.Stats)) func(mirror.Stats) {
	var last time.Time
	return func(ms mirror.Stats) {
		if time.Since(last) > time.Second {
			last = time.Now()
			f(ms)
		}
	}
}

// report prints a mirror step's result on stdout, also when the step
// failed part way (what it did is still worth knowing), and turns the
// step's error into exit 1.
func report(s *stdio, res any, err error) error {
	_ = json.NewEncoder(s.out).Encode(res)
	if err != nil {
		return failed(err)
	}
	return nil
}
