package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/minca-go/minca/engine"
)

// logBuffer collects a logger's lines; safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// captureStderr runs f with os.Stderr sent to a file, and returns what
// was written there: the AWS SDK's default logger writes to os.Stderr.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	tmp, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = tmp
	defer func() { os.Stderr = old }()
	f()
	os.Stderr = old
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(tmp)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fakeURL(endpoint, prefix, params string) string {
	u := "s3://bkt/" + prefix + "?region=us-east-1&path-style=true&endpoint=" + endpoint
	if params != "" {
		u += "&" + params
	}
	return u
}

// rawKeys lists every key in the bucket under prefix, past our code.
func rawKeys(t *testing.T, s *Store, prefix string) []string {
	t.Helper()
	out, err := s.c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String("bkt"), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

func fill(t *testing.T, s *Store, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		if err := s.Put(context.Background(), name(i), body(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// Opening and reading a store with credentials that may only read sends
// no write at all; the probe for conditional writes waits for a Put.
func TestReadOnlyCredentials(t *testing.T) {
	ctx := context.Background()
	f, ep := fakeS3(t)
	fill(t, openFake(t, ep, "ro", "", true), 12)
	f.readOnly.Store(true)
	f.resetMethods()
	for _, create := range []bool{false, true} {
		s, err := Open(ctx, fakeURL(ep, "ro", ""), testOptions(create))
		if err != nil {
			t.Fatalf("open (create %v) with read-only credentials: %v", create, err)
		}
		all, err := s.List(ctx, "segments/", "", 0)
		if err != nil || len(all) != 12 {
			t.Fatalf("list: %d, %v", len(all), err)
		}
		for _, b := range all {
			if _, err := s.Get(ctx, b.Name); err != nil {
				t.Fatal(err)
			}
		}
		if dirs, err := s.Dirs(ctx, "segments/"); err != nil || len(dirs) != 3 {
			t.Fatalf("dirs %v %v", dirs, err)
		}
	}
	if n := f.writes(); n != 0 {
		t.Fatalf("reading sent %d writes (PUT %d, DELETE %d, POST %d)", n, f.method(http.MethodPut), f.method(http.MethodDelete), f.method(http.MethodPost))
	}
	if f.method(http.MethodGet) == 0 {
		t.Fatal("no request was counted; the test shows nothing")
	}
}

// The probe's first PUT lands but its reply is lost: the retry meets 412
// for its own object, which the probe recognises by its token. The probe
// object does not stay.
func TestProbeLostReply(t *testing.T) {
	ctx := context.Background()
	f, ep := fakeS3(t)
	f.lostProbeReply = true
	s, err := Open(ctx, fakeURL(ep, "lost", ""), testOptions(true))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := s.Put(ctx, name(1), body(1)); err != nil {
		t.Fatal(err)
	}
	if !s.Conditional() {
		t.Fatal("the probe took its own lost create for a server without conditional writes")
	}
	if k := rawKeys(t, s, "lost/"+probePrefix); len(k) != 0 {
		t.Fatalf("probe objects left: %v", k)
	}
	if f.LostReplies.Load() != 1 {
		t.Fatalf("%d replies lost, want 1", f.LostReplies.Load())
	}
}

// Probe objects never stay: not when the probe is cancelled half-way,
// not when it fails; and old ones a killed process left are swept by the
// next probe, while a recent one (another process probing now) is not.
func TestProbeNeverLeaks(t *testing.T) {
	t.Run("cancelled", func(t *testing.T) {
		f, ep := fakeS3(t)
		ctx, cancel := context.WithCancel(context.Background())
		var puts atomic.Int32
		hook := func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, probePrefix) {
				return false
			}
			if puts.Add(1) == 2 { // the first landed; cancel during the second
				_, _ = io.Copy(io.Discard, r.Body) // so the server sees the client go
				cancel()
				f.hold(w, r)
				return true
			}
			return false
		}
		f.hook.Store(&hook)
		_, err := Open(ctx, fakeURL(ep, "c", ""), testOptions(true))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("open: %v", err)
		}
		f.hook.Store(nil)
		s := openFake(t, ep, "other", "", true)
		if k := rawKeys(t, s, "c/"+probePrefix); len(k) != 0 || puts.Load() != 2 {
			t.Fatalf("probe objects left after a cancelled probe: %v (%d probe PUTs)", k, puts.Load())
		}
	})
	t.Run("failed", func(t *testing.T) {
		f, ep := fakeS3(t)
		var puts atomic.Int32
		hook := func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, probePrefix) {
				if puts.Add(1) == 2 {
					s3Error(w, http.StatusBadRequest, "InvalidRequest")
					return true
				}
			}
			return false
		}
		f.hook.Store(&hook)
		if _, err := Open(context.Background(), fakeURL(ep, "f", ""), testOptions(true)); err == nil {
			t.Fatal("a probe that failed was taken for success")
		}
		f.hook.Store(nil)
		s := openFake(t, ep, "other", "", true)
		if k := rawKeys(t, s, "f/"+probePrefix); len(k) != 0 || puts.Load() != 2 {
			t.Fatalf("probe objects left after a failed probe: %v (%d probe PUTs)", k, puts.Load())
		}
	})
	t.Run("swept", func(t *testing.T) {
		ctx := context.Background()
		_, ep, clk := fakeS3Clock(t)
		s := openFake(t, ep, "sw", "", true)
		plant := func(name string) {
			if _, err := s.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("sw/" + name), Body: strings.NewReader("x")}); err != nil {
				t.Fatal(err)
			}
		}
		clk.shift.Store(int64(-2 * time.Hour))
		plant(probePrefix + "0123456789abcdef0123456789abcdef")
		clk.shift.Store(0)
		plant(probePrefix + "fedcba9876543210fedcba9876543210")
		// The store was opened with a marker made, so it has probed; a
		// new one probes at its first Put.
		s2, err := Open(ctx, fakeURL(ep, "sw", ""), testOptions(false))
		if err != nil {
			t.Fatal(err)
		}
		if err := s2.Put(ctx, name(1), body(1)); err != nil {
			t.Fatal(err)
		}
		k := rawKeys(t, s, "sw/"+probePrefix)
		if len(k) != 1 || !strings.HasSuffix(k[0], "fedcba9876543210fedcba9876543210") {
			t.Fatalf("after sweeping: %v; want only the recent probe object", k)
		}
	})
}

// A segment PUT that landed but whose reply was lost is retried, meets
// 412, finds its own bytes there and succeeds; a 412 on a retry over
// other bytes is ErrBlobExists and changes nothing.
func TestCreateLostReply(t *testing.T) {
	ctx := context.Background()
	f, ep := fakeS3(t)
	s := openFake(t, ep, "cr", "", true)
	if err := s.Put(ctx, name(9), []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	f.lostReply = true
	if err := s.Put(ctx, name(1), body(1)); err != nil {
		t.Fatalf("a create whose reply was lost: %v", err)
	}
	f.lostReply = false
	f.resetFirstPut = true
	if err := s.Put(ctx, name(2), body(2)); err != nil {
		t.Fatalf("a create reset before it landed: %v", err)
	}
	if err := s.Put(ctx, name(9), []byte("ours")); !errors.Is(err, engine.ErrBlobExists) {
		t.Fatalf("a retried create over other bytes: %v", err)
	}
	for i, want := range map[int][]byte{1: body(1), 2: body(2), 9: []byte("theirs")} {
		if b, err := s.Get(ctx, name(i)); err != nil || !bytes.Equal(b, want) {
			t.Fatalf("%s: %q %v", name(i), b, err)
		}
	}
	if f.LostReplies.Load() != 1 || f.Resets.Load() != 2 {
		t.Fatalf("%d replies lost and %d PUTs reset, want 1 and 2", f.LostReplies.Load(), f.Resets.Load())
	}
}

// A listing cut short mid-body is retried like any request, and the SDK
// prints nothing about it.
func TestCutListing(t *testing.T) {
	ctx := context.Background()
	f, ep := fakeS3(t)
	f.maxKeys = 7
	fill(t, openFake(t, ep, "cut", "", true), 30)
	var logs logBuffer
	o := testOptions(false)
	o.Logger = logs.logger()
	var all []engine.BlobInfo
	var dirs []string
	var err, derr error
	// Opened here: the SDK's default logger takes os.Stderr when made.
	stderr := captureStderr(t, func() {
		var s *Store
		if s, err = Open(ctx, fakeURL(ep, "cut", ""), o); err != nil {
			return
		}
		f.cutLists.Store(3)
		all, err = s.List(ctx, "segments/", "", 0)
		f.cutLists.Store(1)
		dirs, derr = s.Dirs(ctx, "segments/")
	})
	if err != nil || len(all) != 30 {
		t.Fatalf("list through cut pages: %d, %v", len(all), err)
	}
	if derr != nil || len(dirs) != 3 {
		t.Fatalf("dirs through a cut page: %v %v", dirs, derr)
	}
	if f.BodyCuts.Load() != 4 {
		t.Fatalf("%d listings cut, want 4", f.BodyCuts.Load())
	}
	if stderr != "" {
		t.Fatalf("printed on stderr: %q", stderr)
	}
	if n := strings.Count(logs.String(), "s3 unreachable, retrying"); n != 4 || !strings.Contains(logs.String(), "op=list") {
		t.Fatalf("want 4 retry lines for the listing, got %d:\n%s", n, logs.String())
	}
}

// A connection that stalls — no answer, or half a body and then nothing —
// is given up after the timeout and retried (the fake server says whether
// it was: a stall it held until its own limit was waited out); the
// timeout is on progress, so a slow body that keeps coming is not cut.
func TestStall(t *testing.T) {
	ctx := context.Background()
	f, ep := fakeS3(t)
	fill(t, openFake(t, ep, "st", "", true), 3)
	var logs logBuffer
	o := testOptions(false)
	o.Logger = logs.logger()
	s, err := Open(ctx, fakeURL(ep, "st", "timeout=250ms"), o)
	if err != nil {
		t.Fatal(err)
	}
	timed := func(what string, op func() error) {
		t.Helper()
		if err := op(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := f.WaitedOut.Load(); n != 0 {
			t.Fatalf("%s: the stall was waited out, not given up", what)
		}
	}
	f.stallNext(1, isList)
	timed("a stalled listing", func() error {
		l, err := s.List(ctx, "segments/", "", 0)
		if err == nil && len(l) != 3 {
			err = errors.New("short listing")
		}
		return err
	})
	f.stallBodies.Store(1)
	timed("a GET stalled mid-body", func() error {
		b, err := s.Get(ctx, name(2))
		if err == nil && !bytes.Equal(b, body(2)) {
			err = errors.New("wrong bytes")
		}
		return err
	})
	f.stallNext(1, func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/segments/")
	})
	timed("a PUT done but never answered", func() error { return s.Put(ctx, name(7), body(7)) })
	if b, err := s.Get(ctx, name(7)); err != nil || !bytes.Equal(b, body(7)) {
		t.Fatalf("after the stalled PUT: %v", err)
	}
	if f.Stalls.Load() != 3 {
		t.Fatalf("%d stalls injected, want 3", f.Stalls.Load())
	}
	for _, op := range []string{"list", "get", "put"} {
		if n := strings.Count(logs.String(), "op="+op+" "); n != 1 || !strings.Contains(logs.String(), `err="no progress for 250ms"`) {
			t.Fatalf("want one retry line for the stalled %s, naming the stall; got %d:\n%s", op, n, logs.String())
		}
	}
	// The slow body is read under a timeout of its own, longer than 250 ms:
	// at 250 ms a gap of 25 ms was cut when a loaded machine left the
	// reader unscheduled for ten of them.
	slow, err := Open(ctx, fakeURL(ep, "st", "timeout="+trickleTimeout), testOptions(false))
	if err != nil {
		t.Fatal(err)
	}
	f.trickle.Store(1)
	before := f.method(http.MethodGet)
	start := time.Now()
	if b, err := slow.Get(ctx, name(3)); err != nil || !bytes.Equal(b, body(3)) {
		t.Fatalf("a slow body: %v", err)
	}
	timeout, _ := time.ParseDuration(trickleTimeout)
	if d := time.Since(start); d < trickled*trickleGap || d <= timeout || f.method(http.MethodGet)-before != 1 {
		t.Fatalf("a body trickling in for %v took %d GETs; want one, untouched by the %v timeout", d, f.method(http.MethodGet)-before, timeout)
	}
}

// A closed port: Open retries, saying so, and gives up at the connect
// deadline with an error that says unreachable. The retries wait on a
// clock of the test's, on which waiting takes no time: the deadline is
// reached by the waits the backoff chooses, never by how fast the machine
// is, and giving up when the next wait would pass it is seen exactly.
func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := "http://" + l.Addr().String()
	l.Close()
	var logs logBuffer
	o := testOptions(false)
	o.Logger = logs.logger()
	o.MaxBackoff = 0     // the default, so the deadline is what ends it
	o.MaxAttempts = 1000 // nor the count of attempts
	clk := newWaitless()
	o.clock = clk
	start := clk.Now()
	_, err = Open(context.Background(), fakeURL(ep, "x", "connect-timeout=1500ms"), o)
	took := clk.Now().Sub(start)
	if !errors.Is(err, engine.ErrUnreachable) {
		t.Fatalf("open of a closed port: %v", err)
	}
	if took > 1500*time.Millisecond {
		t.Fatalf("open waited %v; the deadline was 1.5s", took)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, ep) || !strings.Contains(msg, "connection refused") {
		t.Fatalf("want one line naming the endpoint and the cause: %q", msg)
	}
	m := regexp.MustCompile(`unreachable after (\d+) attempts in ([0-9.]+m?s)`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("the error does not say how many attempts, in how long: %q", msg)
	}
	if n, _ := strconv.Atoi(m[1]); n < 2 || n >= o.MaxAttempts {
		t.Fatalf("gave up after %s attempts: want the deadline, not the count, to end it", m[1])
	}
	if !strings.Contains(logs.String(), `msg="s3 unreachable, retrying" endpoint=`+ep+` op=get name=minca-store.json attempt=2/1000 in=`) {
		t.Fatalf("no retry line naming the endpoint, the operation and the attempt:\n%s", logs.String())
	}
}

// waitless is a retry clock on which a wait takes no time but moves the
// clock on by what it waited. It starts an hour ahead, so a deadline set
// by it is never reached by real time during a test.
type waitless struct {
	mu  sync.Mutex
	now time.Time
}

func newWaitless() *waitless { return &waitless{now: time.Now().Add(time.Hour)} }

func (w *waitless) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

func (w *waitless) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = w.now.Add(d)
	return nil
}

// Throttling that never ends: MaxAttempts attempts, a line before each
// wait, then an error that wraps ErrUnreachable.
func TestThrottledThroughout(t *testing.T) {
	ctx := context.Background()
	f, ep := fakeS3(t)
	fill(t, openFake(t, ep, "thr", "", true), 1)
	var logs logBuffer
	o := testOptions(false)
	o.Logger = logs.logger()
	o.MaxAttempts = 4
	s, err := Open(ctx, fakeURL(ep, "thr", ""), o)
	if err != nil {
		t.Fatal(err)
	}
	f.down.Store(true)
	before := f.method(http.MethodGet)
	_, err = s.Get(ctx, name(1))
	if !errors.Is(err, engine.ErrUnreachable) || !strings.Contains(err.Error(), "503 SlowDown") {
		t.Fatalf("get through endless throttling: %v", err)
	}
	if n := f.method(http.MethodGet) - before; n != 4 {
		t.Fatalf("%d attempts, want MaxAttempts = 4", n)
	}
	if n := strings.Count(logs.String(), "s3 unreachable, retrying"); n != 3 {
		t.Fatalf("%d retry lines, want 3:\n%s", n, logs.String())
	}
}
