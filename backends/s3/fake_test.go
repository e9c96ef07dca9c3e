package s3

import (
	"bytes"
	"context"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// faults sits in front of gofakes3 and misbehaves as S3 and S3-compatible
// servers do (catalog S2–S6). It is safe for concurrent use.
type faults struct {
	next http.Handler

	mu          sync.Mutex
	rng         *rand.Rand
	rate        float64 // chance a request fails, when failing is on
	consecutive int     // failures in a row so far; capped so retries end

	failing          atomic.Bool
	maxKeys          int  // force a smaller page than asked (0: no)
	stripIfNoneMatch bool // a server without conditional writes
	rejectChecksums  bool // a server that fails on x-amz-checksum-* headers
	// conflictOnce answers the first PUT of each segment with 409
	// ConditionalRequestConflict; lostReply does the first PUT of each
	// segment and then drops the connection before answering (S3).
	conflictOnce, lostReply bool
	// lostProbeReply does the first PUT of each probe object and drops the
	// connection before answering; resetFirstPut drops the first PUT of
	// each segment without doing it.
	lostProbeReply, resetFirstPut bool
	seenPut                       sync.Map

	cutLists    atomic.Int32 // listings still to cut short mid-body
	stalls      atomic.Int32 // requests (of stallWhich) still to hold unanswered; a PUT is done first
	stallWhich  atomic.Pointer[func(*http.Request) bool]
	stallBodies atomic.Int32 // object GETs still to hold mid-body
	trickle     atomic.Int32 // object GETs still to send slowly, in trickled pieces
	readOnly    atomic.Bool  // PUT, POST and DELETE get 403 AccessDenied
	down        atomic.Bool  // every request gets 503 SlowDown
	// hook, when set, sees each request first; true means it answered.
	hook atomic.Pointer[func(http.ResponseWriter, *http.Request) bool]

	methods map[string]int // requests by method, under mu

	Requests, SlowDowns, ServerErrors, Resets, BodyCuts, Stalls, LostReplies atomic.Int64
	// WaitedOut counts stalls the client did not give up: held stallFor.
	WaitedOut atomic.Int64
}

// stallNext holds the next n requests that which selects.
func (f *faults) stallNext(n int32, which func(*http.Request) bool) {
	f.stallWhich.Store(&which)
	f.stalls.Store(n)
}

// stallFor is how long a stalled request is held when the client does
// not give up first.
const stallFor = 20 * time.Second

// writes counts requests that change something.
func (f *faults) writes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.methods[http.MethodPut] + f.methods[http.MethodPost] + f.methods[http.MethodDelete]
}

func (f *faults) method(m string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.methods[m]
}

func (f *faults) resetMethods() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.methods = map[string]int{}
}

func isList(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2"
}

func isObjectGet(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "" && strings.Count(r.URL.Path, "/") > 1
}

func s3Error(w http.ResponseWriter, status int, code string) {
	w.WriteHeader(status)
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>injected</Message></Error>`)
}

// hold keeps a request unanswered until the client gives up (or
// stallFor, counted in WaitedOut), then drops the connection.
func (f *faults) hold(w http.ResponseWriter, r *http.Request) {
	f.Stalls.Add(1)
	select {
	case <-r.Context().Done():
	case <-time.After(stallFor):
		f.WaitedOut.Add(1)
	}
	hijackClose(w)
}

// cut sends the headers and half the recorded body, then drops the
// connection: with a reset (the client reads "connection reset") or
// closed cleanly (it reads an unexpected EOF, short of Content-Length).
func (f *faults) cut(w http.ResponseWriter, rec *httptest.ResponseRecorder, reset bool) {
	f.BodyCuts.Add(1)
	writeHead(w, rec)
	w.Write(rec.Body.Bytes()[:rec.Body.Len()/2])
	w.(http.Flusher).Flush()
	if reset {
		hijackClose(w)
		return
	}
	if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
		c.Close()
	}
}

// take decrements n if it is positive, reporting whether it was.
func take(n *atomic.Int32) bool {
	for {
		v := n.Load()
		if v <= 0 {
			return false
		}
		if n.CompareAndSwap(v, v-1) {
			return true
		}
	}
}

func (f *faults) pick() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.failing.Load() || f.consecutive >= 2 || f.rng.Float64() >= f.rate {
		f.consecutive = 0
		return -1
	}
	f.consecutive++
	return f.rng.Intn(4)
}

func (f *faults) coin() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.Intn(2) == 0
}

func (f *faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.Requests.Add(1)
	f.mu.Lock()
	if f.methods == nil {
		f.methods = map[string]int{}
	}
	f.methods[r.Method]++
	f.mu.Unlock()
	if h := f.hook.Load(); h != nil && (*h)(w, r) {
		return
	}
	if f.down.Load() {
		f.SlowDowns.Add(1)
		s3Error(w, http.StatusServiceUnavailable, "SlowDown")
		return
	}
	if f.readOnly.Load() && (r.Method == http.MethodPut || r.Method == http.MethodPost || r.Method == http.MethodDelete) {
		_, _ = io.Copy(io.Discard, r.Body)
		s3Error(w, http.StatusForbidden, "AccessDenied")
		return
	}
	if f.stripIfNoneMatch {
		r.Header.Del("If-None-Match")
	}
	if f.rejectChecksums {
		for k := range r.Header {
			if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-checksum-") || lk == "x-amz-sdk-checksum-algorithm" {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>XAmzContentSHA256Mismatch</Code><Message>checksum headers are not supported</Message></Error>`)
				return
			}
		}
	}
	if f.maxKeys > 0 && r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2" {
		q := r.URL.Query()
		if n, _ := strconv.Atoi(q.Get("max-keys")); n == 0 || n > f.maxKeys {
			q.Set("max-keys", strconv.Itoa(f.maxKeys))
			r.URL.RawQuery = q.Encode()
		}
	}
	if which := f.stallWhich.Load(); which != nil && (*which)(r) && take(&f.stalls) {
		if r.Method == http.MethodPut {
			f.next.ServeHTTP(httptest.NewRecorder(), r) // done, but no answer comes
		}
		f.hold(w, r)
		return
	}
	if isObjectGet(r) && take(&f.stallBodies) {
		rec := httptest.NewRecorder()
		f.next.ServeHTTP(rec, r)
		writeHead(w, rec)
		w.Write(rec.Body.Bytes()[:rec.Body.Len()/2])
		w.(http.Flusher).Flush()
		f.hold(w, r)
		return
	}
	if isObjectGet(r) && take(&f.trickle) {
		rec := httptest.NewRecorder()
		f.next.ServeHTTP(rec, r)
		writeHead(w, rec)
		b := rec.Body.Bytes()
		for i := range trickled {
			time.Sleep(trickleGap)
			w.Write(b[len(b)*i/trickled : len(b)*(i+1)/trickled])
			w.(http.Flusher).Flush()
		}
		return
	}
	if isList(r) && take(&f.cutLists) {
		rec := httptest.NewRecorder()
		f.next.ServeHTTP(rec, r)
		f.cut(w, rec, false)
		return
	}
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/"+probePrefix) && f.lostProbeReply {
		if _, again := f.seenPut.LoadOrStore(r.URL.Path, true); !again {
			f.LostReplies.Add(1)
			f.next.ServeHTTP(httptest.NewRecorder(), r)
			hijackClose(w)
			return
		}
	}
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/segments/") && f.resetFirstPut {
		if _, again := f.seenPut.LoadOrStore(r.URL.Path, true); !again {
			_, _ = io.Copy(io.Discard, r.Body)
			f.Resets.Add(1)
			hijackClose(w)
			return
		}
	}
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/segments/") && (f.conflictOnce || f.lostReply) {
		if _, again := f.seenPut.LoadOrStore(r.URL.Path, true); !again {
			if f.conflictOnce {
				_, _ = io.Copy(io.Discard, r.Body)
				w.WriteHeader(http.StatusConflict)
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>ConditionalRequestConflict</Code><Message>try again</Message></Error>`)
				return
			}
			f.LostReplies.Add(1)
			f.next.ServeHTTP(httptest.NewRecorder(), r) // done, but the answer is lost
			hijackClose(w)
			return
		}
	}
	switch f.pick() {
	case 0:
		f.SlowDowns.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
		return
	case 1:
		f.ServerErrors.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`)
		return
	case 2:
		f.Resets.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		hijackClose(w)
		return
	case 3:
		if r.Method == http.MethodGet {
			// Headers and half the body (an object's or a listing's),
			// then the connection drops.
			rec := httptest.NewRecorder()
			f.next.ServeHTTP(rec, r)
			if rec.Code == http.StatusOK && rec.Body.Len() > 1 {
				f.cut(w, rec, f.coin())
				return
			}
			copyRecorded(w, rec)
			return
		}
	}
	f.next.ServeHTTP(w, r)
}

// writeHead sends a recorded response's headers and status.
func writeHead(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
}

func copyRecorded(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	writeHead(w, rec)
	w.Write(rec.Body.Bytes())
}

func hijackClose(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("test server cannot hijack")
	}
	c, _, err := hj.Hijack()
	if err == nil {
		if tc, ok := c.(interface{ SetLinger(int) error }); ok {
			_ = tc.SetLinger(0) // RST, not FIN
		}
		c.Close()
	}
}

// fakeS3 runs gofakes3 on loopback behind a fault injector, with one bucket.
func fakeS3(t testing.TB) (*faults, string) {
	t.Helper()
	f, ep, _ := fakeS3Clock(t)
	return f, ep
}

// A trickled body comes in trickled pieces, trickleGap apart: longer in
// all than trickleTimeout, and each gap a twentieth of it, so a gap
// stretched by a loaded machine's scheduler is still far inside it.
const (
	trickled       = 24
	trickleGap     = 100 * time.Millisecond
	trickleTimeout = "2s"
)

// clock is the fake server's clock for LastModified: now, shifted.
type clock struct{ shift atomic.Int64 }

func (c *clock) Now() time.Time                  { return time.Now().Add(time.Duration(c.shift.Load())) }
func (c *clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// fakeS3Clock is fakeS3 with the clock its objects are stamped by.
func fakeS3Clock(t testing.TB) (*faults, string, *clock) {
	t.Helper()
	c := &clock{}
	be := s3mem.New(s3mem.WithTimeSource(c))
	if err := be.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	f := &faults{next: gofakes3.New(be).Server(), rng: rand.New(rand.NewSource(1)), rate: 0.3}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL, c
}

func testOptions(create bool) *Options {
	return &Options{
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		Create:      create,
		MaxBackoff:  20 * time.Millisecond,
	}
}

func openFake(t testing.TB, endpoint, prefix, checksum string, create bool) *Store {
	t.Helper()
	u := "s3://bkt/" + prefix + "?region=us-east-1&path-style=true&endpoint=" + endpoint
	if checksum != "" {
		u += "&checksum=" + checksum
	}
	s, err := Open(context.Background(), u, testOptions(create))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func body(n int) []byte { return bytes.Repeat([]byte{byte(n)}, 100+n) }

func deleteInput(bucket, key string) *s3.DeleteObjectInput {
	return &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}
}
