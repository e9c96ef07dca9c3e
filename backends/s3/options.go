package s3

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Options configure a store. nil means defaults. A zero field takes the
// store URL's parameter where there is one (see [Location]), else its
// default; a negative one is an error.
type Options struct {
	// Credentials replace the standard chain (environment, ~/.aws files,
	// SSO, container and instance roles). Tests pass static ones.
	// Default nil.
	Credentials aws.CredentialsProvider
	// HTTPClient replaces the S3 client's HTTP client (a proxy, custom
	// TLS); credential services keep the SDK's. Default nil.
	HTTPClient *http.Client
	// Create makes the marker when the prefix holds nothing of ours.
	// Default false.
	Create bool
	// MaxAttempts per request, the first included. Default 8.
	MaxAttempts int
	// MaxBackoff caps the wait between attempts. Default 20 s.
	MaxBackoff time.Duration
	// Timeout is how long a request may go without progress — no byte
	// sent or received — before the attempt is given up and retried.
	// It bounds a stall, not a transfer: a large object on a slow link
	// takes as long as it takes while bytes flow. Default: the URL's
	// timeout=, else 30 s.
	Timeout time.Duration
	// ConnectTimeout bounds Open: credentials, the first requests and
	// their retries. An endpoint that does not answer in time is
	// [engine.ErrUnreachable]. Default: the URL's connect-timeout=, else
	// 30 s.
	ConnectTimeout time.Duration
	// MaxObject is the largest object Get reads, in bytes. Default 1 GiB.
	MaxObject int64
	// Logger gets a Warn line before each retry (endpoint, operation,
	// attempt, wait), the degraded-mode notice, and the AWS SDK's own
	// messages at Debug. Default: discard.
	Logger *slog.Logger

	// clock is what retries wait on and the connect deadline is set by;
	// nil: the real one. Tests set their own, whose waits take no time.
	clock retryClock
}

// retryClock is the time retries run on.
type retryClock interface {
	Now() time.Time
	// Sleep waits d, or until ctx is done (then its error).
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Defaults.
const (
	defaultMaxAttempts    = 8
	defaultMaxBackoff     = 20 * time.Second
	defaultTimeout        = 30 * time.Second
	defaultConnectTimeout = 30 * time.Second
	defaultMaxObject      = 1 << 30
)

// resolve clones opts, fills defaults from the location and the package's
// defaults, and validates.
func resolve(opts *Options, loc Location) (Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.MaxAttempts < 0:
		return o, fmt.Errorf("minca/s3: MaxAttempts %d is negative", o.MaxAttempts)
	case o.MaxBackoff < 0:
		return o, fmt.Errorf("minca/s3: MaxBackoff %v is negative", o.MaxBackoff)
	case o.Timeout < 0:
		return o, fmt.Errorf("minca/s3: Timeout %v is negative", o.Timeout)
	case o.ConnectTimeout < 0:
		return o, fmt.Errorf("minca/s3: ConnectTimeout %v is negative", o.ConnectTimeout)
	case o.MaxObject < 0:
		return o, fmt.Errorf("minca/s3: MaxObject %d is negative", o.MaxObject)
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = defaultMaxAttempts
	}
	if o.clock == nil {
		o.clock = realClock{}
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = defaultMaxBackoff
	}
	if o.Timeout == 0 {
		o.Timeout = cmp.Or(loc.Timeout, defaultTimeout)
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = cmp.Or(loc.ConnectTimeout, defaultConnectTimeout)
	}
	if o.MaxObject == 0 {
		o.MaxObject = defaultMaxObject
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}
