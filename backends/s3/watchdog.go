package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// stallError is an attempt given up after Timeout without progress. It is
// transient: the request is retried.
type stallError struct{ d time.Duration }

func (e *stallError) Error() string { return fmt.Sprintf("no progress for %v", e.d) }

// Timeout marks it as a network timeout, as net's own are.
func (e *stallError) Timeout() bool { return true }

// watchdog is the S3 client's HTTP client: it gives up a request that
// makes no progress — no byte of the request body sent, no byte of the
// response received — for timeout (catalog S4: a stalled connection
// otherwise hangs forever). Progress, not total time, is bounded, so an
// object of any size goes through on a slow link while bytes flow,
// without guessing a rate to scale a deadline by.
type watchdog struct {
	next    aws.HTTPClient
	timeout time.Duration
}

func (w watchdog) Do(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	p := &progress{timeout: w.timeout, ctx: ctx, cancel: cancel, base: time.Now()}
	p.mu.Lock()
	p.timer = time.AfterFunc(w.timeout, p.check)
	p.mu.Unlock()
	req = req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody && req.ContentLength > 0 {
		req.Body = &progressReader{ReadCloser: req.Body, p: p}
	}
	resp, err := w.next.Do(req)
	if err != nil {
		p.stop()
		return nil, p.explain(err)
	}
	resp.Body = &progressReader{ReadCloser: resp.Body, p: p, closes: true}
	return resp, nil
}

// progress is one request's watchdog.
type progress struct {
	timeout time.Duration
	ctx     context.Context
	cancel  context.CancelCauseFunc
	base    time.Time    // when the request began (monotonic)
	last    atomic.Int64 // ns after base the last byte moved

	mu    sync.Mutex
	timer *time.Timer
	done  bool
}

func (p *progress) touch() { p.last.Store(int64(time.Since(p.base))) }

// check runs on the timer: it cancels a request idle for timeout, or
// sleeps until it could be.
func (p *progress) check() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	idle := time.Since(p.base) - time.Duration(p.last.Load())
	if idle >= p.timeout {
		p.cancel(&stallError{p.timeout})
		return
	}
	p.timer.Reset(p.timeout - idle)
}

func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	p.timer.Stop()
	p.cancel(nil)
}

// explain replaces the transport's "context canceled" with the stall
// that caused it.
func (p *progress) explain(err error) error {
	var se *stallError
	if errors.As(context.Cause(p.ctx), &se) {
		return se
	}
	return err
}

// progressReader notes each byte moved, and ends the watchdog when the
// response body is closed.
type progressReader struct {
	io.ReadCloser
	p      *progress
	closes bool
}

func (r *progressReader) Read(b []byte) (int, error) {
	n, err := r.ReadCloser.Read(b)
	if n > 0 {
		r.p.touch()
	}
	if err != nil && err != io.EOF {
		err = r.p.explain(err)
	}
	return n, err
}

func (r *progressReader) Close() error {
	err := r.ReadCloser.Close()
	if r.closes {
		r.p.stop()
	}
	return err
}
