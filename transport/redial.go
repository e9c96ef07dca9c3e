package transport

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// RedialOptions shape [Redial]'s backoff. nil means defaults.
type RedialOptions struct {
	// Min is the first wait after a failure. Default 250 ms.
	Min time.Duration
	// Max caps the wait. Default 30 s.
	Max time.Duration
	// ResetAfter: a connection that lasted this long starts the backoff
	// again from Min. Default 10 s.
	ResetAfter time.Duration
	// OnError, when set, hears each failed dial or ended connection, and
	// how long Redial waits before the next try.
	OnError func(err error, wait time.Duration)
}

// Redial keeps a connection: it dials, hands each connection to handle
// (closing it when handle returns), and dials again when the connection
// ends or a dial fails, waiting with exponential backoff and full jitter
// (a wait drawn uniformly from [0, min(Max, Min·2^n)] after n failures in a
// row), so peers that lost a server together do not return together. It
// returns ctx.Err() when ctx is done. `minca serve --peer URL` runs one per
// peer, with dial a closure over [Dial].
func Redial(ctx context.Context, dial func(context.Context) (*Conn, error), handle func(context.Context, *Conn), opts *RedialOptions) error {
	o := RedialOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Min == 0 {
		o.Min = 250 * time.Millisecond
	}
	if o.Max == 0 {
		o.Max = 30 * time.Second
	}
	if o.ResetAfter == 0 {
		o.ResetAfter = 10 * time.Second
	}
	if o.Min < 0 || o.Max < o.Min || o.ResetAfter < 0 {
		return fmt.Errorf("minca/transport: redial options: want 0 < Min ≤ Max and ResetAfter ≥ 0, have %v, %v, %v", o.Min, o.Max, o.ResetAfter)
	}
	failures := 0
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c, err := dial(ctx)
		if err == nil {
			start := time.Now()
			handle(ctx, c)
			c.Close()
			err = c.Err()
			if time.Since(start) >= o.ResetAfter {
				failures = 0
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := backoff(o.Min, o.Max, failures)
		failures++
		if o.OnError != nil {
			o.OnError(err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// backoff is the wait after n failures in a row: uniform in
// [0, min(max, lo·2^n)].
func backoff(lo, hi time.Duration, n int) time.Duration {
	ceil := hi
	if n < 32 && lo<<n > 0 && lo<<n < hi {
		ceil = lo << n
	}
	return rand.N(ceil + 1)
}
