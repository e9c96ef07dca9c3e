package s3

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/minca-go/minca/engine"
)

// ErrConfig marks what retrying cannot mend: missing or refused
// credentials, a wrong region or endpoint, a clock too far off. The
// error's text says what to set or fix. It is never
// [engine.ErrUnreachable].
var ErrConfig = errors.New("minca/s3: configuration")

// problem is an error with a short message of our own, wrapping its kind
// ([ErrConfig], [engine.ErrUnreachable]) and the SDK's error it stands
// for, so errors.Is and errors.As reach both and the text stays one line.
type problem struct {
	msg  string
	kind error
	err  error
}

func (p *problem) Error() string   { return p.msg }
func (p *problem) Unwrap() []error { return []error{p.kind, p.err} }

// do runs one request, retrying (with backoff, a Warn line before each
// wait) what may succeed later: throttling, 5xx, a connection refused,
// reset or stalled, a body cut short — listings included, whose bodies the
// SDK reads and would not retry when cut (catalog S4). The SDK's own
// retryer is off, so every request is retried this one way and each
// attempt is visible. f gets the attempt number, from 1. After
// MaxAttempts, or when ctx's deadline leaves no time for another
// attempt, the error wraps [engine.ErrUnreachable]; an error retrying
// cannot mend is returned at once (auth errors as [ErrConfig]).
func (s *Store) do(ctx context.Context, op, name string, f func(ctx context.Context, attempt int) error) error {
	s.counts.of(op).Add(1)
	start := s.o.clock.Now()
	var last error
	for attempt := 1; ; attempt++ {
		err := f(ctx, attempt)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return s.stopped(ctx, op, name, last, attempt, start)
		}
		if !transient(err) {
			return &engine.BlobError{Op: op, Name: name, Err: s.final(err)}
		}
		last = err
		if attempt >= s.o.MaxAttempts {
			return s.unreachable(op, name, last, attempt, start)
		}
		d := backoff(attempt, s.o.MaxBackoff)
		if dl, ok := ctx.Deadline(); ok && dl.Sub(s.o.clock.Now()) < d {
			return s.unreachable(op, name, last, attempt, start)
		}
		s.o.Logger.Warn("s3 unreachable, retrying", "endpoint", s.endpoint, "op", op, "name", name,
			"attempt", fmt.Sprintf("%d/%d", attempt+1, s.o.MaxAttempts), "in", d.Round(time.Millisecond), "err", describe(err))
		if s.o.clock.Sleep(ctx, d) != nil {
			return s.stopped(ctx, op, name, last, attempt, start)
		}
	}
}

func (s *Store) unreachable(op, name string, last error, attempts int, start time.Time) error {
	return &engine.BlobError{Op: op, Name: name, Err: &problem{
		msg:  fmt.Sprintf("%s unreachable after %d attempts in %v: %s", s.endpoint, attempts, s.o.clock.Now().Sub(start).Round(time.Millisecond), describe(last)),
		kind: engine.ErrUnreachable, err: last,
	}}
}

// stopped is the error of a request whose context ended: a deadline that
// passed while the endpoint kept failing (Open's, or the caller's) is
// unreachable; a cancellation is only that.
func (s *Store) stopped(ctx context.Context, op, name string, last error, attempts int, start time.Time) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, context.Canceled) {
		return &engine.BlobError{Op: op, Name: name, Err: cause}
	}
	took := s.o.clock.Now().Sub(start).Round(time.Millisecond)
	msg := fmt.Sprintf("%s did not answer within %v", s.endpoint, took)
	if last != nil {
		msg = fmt.Sprintf("%s unreachable after %d attempts in %v: %s", s.endpoint, attempts, took, describe(last))
	}
	return &engine.BlobError{Op: op, Name: name, Err: &problem{msg: msg, kind: engine.ErrUnreachable, err: cause}}
}

// final turns an error retrying cannot mend into one that says what to
// fix, where we know; others pass as they are (a 404 is the caller's).
func (s *Store) final(err error) error {
	var (
		p  *problem
		be *engine.BlobError
	)
	if errors.As(err, &p) || errors.As(err, &be) {
		return err // said already
	}
	code, st := apiCode(err), status(err)
	var hint string
	switch {
	case code == "InvalidAccessKeyId":
		hint = "the server does not know the access key: check AWS_ACCESS_KEY_ID or AWS_PROFILE"
	case code == "SignatureDoesNotMatch":
		hint = "the secret key does not match the access key: check AWS_SECRET_ACCESS_KEY or AWS_PROFILE"
	case code == "ExpiredToken" || code == "TokenRefreshRequired" || code == "InvalidToken":
		hint = "the session token is expired or invalid: refresh the credentials (AWS_SESSION_TOKEN, or aws sso login for AWS_PROFILE)"
	case code == "RequestTimeTooSkewed":
		hint = "this computer's clock is too far from the server's: set the clock"
	case code == "AuthorizationHeaderMalformed" || code == "PermanentRedirect" || st == http.StatusMovedPermanently:
		hint = "the bucket is in another region: set region= in the store URL (or AWS_REGION)"
	case st == http.StatusForbidden:
		hint = "access denied: use credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE) allowed this operation on the bucket"
	}
	var dns *net.DNSError
	if hint == "" && errors.As(err, &dns) && dns.IsNotFound {
		hint = fmt.Sprintf("no such host %s: check endpoint= and region= in the store URL", dns.Name)
	}
	if hint == "" {
		return err
	}
	if code != "" {
		hint = fmt.Sprintf("%s (%d %s)", hint, st, code)
	} else if st != 0 {
		hint = fmt.Sprintf("%s (HTTP %d)", hint, st)
	}
	return &problem{msg: hint, kind: ErrConfig, err: err}
}

// transient reports whether err may go away by itself: throttling and
// server errors, and a request that got no whole answer.
func transient(err error) bool {
	var (
		be  *engine.BlobError
		se  *stallError
		de  *smithy.DeserializationError
		rse *smithyhttp.RequestSendError
		ne  net.Error
		dns *net.DNSError
	)
	switch {
	case errors.As(err, &be):
		// A request made inside an attempt (the GET after a 412) has
		// been retried already.
		return false
	case errors.As(err, &dns) && dns.IsNotFound:
		return false
	case errors.As(err, &se), errors.As(err, &de), errors.As(err, &rse), errors.As(err, &ne),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		// A body cut short is a deserialization error to the SDK, which
		// therefore does not retry it (catalog S4): we do.
		return true
	}
	switch apiCode(err) {
	case "SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequests",
		"InternalError", "ServiceUnavailable", "RequestTimeout",
		"ConditionalRequestConflict", "OperationAborted": // 409s to retry (S3)
		return true
	}
	st := status(err)
	return st == http.StatusTooManyRequests || st >= 500 && st != http.StatusNotImplemented
}

func status(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// describe is err in a few words for a log line or a one-line error:
// the status and code, or the network error without the SDK's wrapping.
func describe(err error) string {
	var (
		se *stallError
		oe *net.OpError
		de *smithy.DeserializationError
	)
	switch {
	case errors.As(err, &se):
		return se.Error()
	case apiCode(err) != "" && status(err) != 0:
		return fmt.Sprintf("%d %s", status(err), apiCode(err))
	case errors.As(err, &oe):
		return oe.Error()
	case errors.As(err, &de), errors.Is(err, io.ErrUnexpectedEOF):
		return "response cut short"
	case status(err) != 0:
		return fmt.Sprintf("HTTP %d", status(err))
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ", "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// backoff is "full jitter": a random wait up to min(max, 100 ms × 2^n).
func backoff(attempt int, max time.Duration) time.Duration {
	d := 100 * time.Millisecond << min(attempt, 20)
	if d > max || d <= 0 {
		d = max
	}
	n, err := rand.Int(rand.Reader, big.NewInt(int64(d)+1))
	if err != nil {
		return d
	}
	return time.Duration(n.Int64())
}
