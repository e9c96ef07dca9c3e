package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/api"
)

type fixture struct {
	t     *testing.T
	n     *node.Node
	srv   *httptest.Server
	token string
}

func newFixture(t *testing.T) *fixture {
	acc, _ := identity.GenerateKey()
	f := &fixture{t: t}
	n, err := node.Open(context.Background(), &node.Options{Dir: t.TempDir(), Store: "memory:", Account: acc})
	if err != nil {
		t.Fatal(err)
	}
	f.n = n
	s, err := api.New(n, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(s)
	f.token, _ = api.Token(n.Dir())
	t.Cleanup(func() { f.srv.Close(); n.Close() })
	return f
}

func (f *fixture) do(method, path, token string, body []byte) (int, []byte) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+path, bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func code(b []byte) string {
	var e struct{ Error struct{ Code string } }
	json.Unmarshal(b, &e)
	return e.Error.Code
}

func TestAPIAuthentication(t *testing.T) {
	f := newFixture(t)
	other := newFixture(t)
	var bodies [][]byte
	for _, tok := range []string{"", "wrong", other.token, f.token + "x"} {
		st, b := f.do("GET", "/v1/spaces", tok, nil)
		if st != http.StatusUnauthorized || code(b) != api.CodeUnauthorized {
			t.Fatalf("token %q: %d %s, want 401", tok, st, b)
		}
		bodies = append(bodies, b)
	}
	for _, b := range bodies[1:] {
		if !bytes.Equal(b, bodies[0]) {
			t.Fatalf("401 answers differ, telling something: %s vs %s", b, bodies[0])
		}
	}
	// Not even whether a route exists.
	if st, b := f.do("GET", "/v1/nothing-here", "", nil); st != http.StatusUnauthorized || !bytes.Equal(b, bodies[0]) {
		t.Fatalf("an unknown route without a token: %d %s", st, b)
	}
	if st, _ := f.do("GET", "/v1/spaces", f.token, nil); st != http.StatusOK {
		t.Fatalf("the node's own token: %d", st)
	}
}

func TestAPIBadInput(t *testing.T) {
	f := newFixture(t)
	_, b := f.do("POST", "/v1/spaces", f.token, []byte(`{"name":"bad input"}`))
	var sp struct{ ID string }
	json.Unmarshal(b, &sp)
	path := "/v1/spaces/" + sp.ID + "/records"
	big := []byte(`{"collection":"app.a","body":"` + strings.Repeat("x", api.DefaultMaxBody) + `"}`)
	deep := []byte(`{"collection":"app.a","body":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`)
	for _, c := range []struct {
		name   string
		body   []byte
		status int
		code   string
	}{
		{"oversized", big, 413, api.CodeTooLarge},
		{"10,000 deep", deep, 400, api.CodeTooDeep},
		{"unknown member", []byte(`{"collection":"app.a","body":{},"colour":"red"}`), 400, api.CodeUnknownMember},
		{"missing member", []byte(`{"body":{}}`), 400, api.CodeMissing},
		{"not JSON", []byte(`{"collection":`), 400, api.CodeJSON},
		{"not an object", []byte(`[1]`), 400, api.CodeBad},
		{"duplicate member", []byte(`{"collection":"app.a","collection":"app.b","body":{}}`), 400, api.CodeJSON},
		{"a sys collection", []byte(`{"collection":"sys.role","body":{}}`), 400, node.CodeBadInput},
		{"bad key", []byte(`{"collection":"app.a","key":"UPPER","body":{}}`), 400, node.CodeBadKey},
	} {
		st, b := f.do("POST", path, f.token, c.body)
		if st != c.status || code(b) != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, st, b, c.status, c.code)
		}
	}
	if st, b := f.do("POST", "/v1/spaces/bnotheld/records", f.token, []byte(`{"collection":"app.a","body":{}}`)); st != 404 || code(b) != node.CodeSpaceNotKept {
		t.Errorf("a space not kept: %d %s", st, b)
	}
	if st, b := f.do("GET", "/v1/spaces/"+sp.ID+"/events?after=x.y", f.token, nil); st != 400 || code(b) != api.CodeCursor {
		t.Errorf("a bad cursor: %d %s", st, b)
	}
}

func TestAPIRecordsQueriesAndEvents(t *testing.T) {
	f := newFixture(t)
	_, b := f.do("POST", "/v1/spaces", f.token, []byte(`{"name":"records"}`))
	var sp struct{ ID string }
	json.Unmarshal(b, &sp)
	base := "/v1/spaces/" + sp.ID
	// A WebSocket subscriber from the start.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.srv.URL, "http")+base+"/events?after=0",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + f.token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	st, b := f.do("POST", base+"/records", f.token, []byte(`{"collection":"app.todo","body":{"text":"milk"}}`))
	if st != 201 {
		t.Fatalf("put: %d %s", st, b)
	}
	var v struct {
		ID, Key string
		Seq     int
	}
	json.Unmarshal(b, &v)
	if st, b = f.do("GET", base+"/records/"+v.Key, f.token, nil); st != 200 || !strings.Contains(string(b), v.ID) {
		t.Fatalf("get: %d %s", st, b)
	}
	if st, b = f.do("DELETE", base+"/records/"+v.Key, f.token, nil); st != 201 || !strings.Contains(string(b), `"deleted":true`) {
		t.Fatalf("delete: %d %s", st, b)
	}
	if st, b = f.do("GET", base+"/records/"+v.Key+"/history", f.token, nil); st != 200 || strings.Count(string(b), `"standing":"stands"`) != 2 {
		t.Fatalf("history: %d %s", st, b)
	}
	if st, b = f.do("GET", base+"/records/nothere", f.token, nil); st != 404 || code(b) != api.CodeNotFound {
		t.Fatalf("a record not held: %d %s", st, b)
	}
	f.do("POST", base+"/records", f.token, []byte(`{"collection":"app.todo","body":{"text":"eggs"}}`))
	if st, b = f.do("POST", base+"/query", f.token, []byte(`{"collection":"app.todo"}`)); st != 200 || !strings.Contains(string(b), "eggs") || strings.Contains(string(b), "milk") {
		t.Fatalf("query (the deleted record is not answered): %d %s", st, b)
	}
	// Malformed queries are the index's to refuse, with the bad member's path.
	for _, c := range []struct{ q, code, field string }{
		{`{"where":{}}`, index.CodeMissing, "collection"},
		{`{"collection":"app.todo","where":{"text":{"$near":1}}}`, index.CodeOperator, "where.text.$near"},
		{`{"collection":"app.todo","colour":"red"}`, index.CodeUnknown, "colour"},
		{`{"collection":`, index.CodeJSON, ""},
	} {
		st, b = f.do("POST", base+"/query", f.token, []byte(c.q))
		var e struct{ Error struct{ Code, Field string } }
		json.Unmarshal(b, &e)
		if st != 400 || e.Error.Code != c.code || e.Error.Field != c.field {
			t.Errorf("query %s: %d %s, want 400 %s at %q", c.q, st, b, c.code, c.field)
		}
	}
	if st, b = f.do("POST", "/v1/spaces/bnotheld/query", f.token, []byte(`{"collection":"app.todo"}`)); st != 404 || code(b) != node.CodeSpaceNotKept {
		t.Fatalf("a query in a space not kept: %d %s", st, b)
	}
	// The WebSocket saw the put, the delete and the second put, in order.
	var kinds []string
	for len(kinds) < 3 {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ev node.Event
		json.Unmarshal(msg, &ev)
		if ev.Collection == "app.todo" {
			kinds = append(kinds, ev.Kind)
		}
	}
	// The first reads as current or, when the pump read it after the
	// delete, as stored: events say what is true when made.
	if k := strings.Join(kinds[1:], ","); k != "deleted,current" || (kinds[0] != "current" && kinds[0] != "stored") {
		t.Fatalf("the events over the WebSocket: %v", kinds)
	}
	// Server-Sent Events, from the start, through the client.
	c := api.NewClient(f.srv.URL, f.token)
	var n int
	err = c.Events(ctx, base+"/events?after=0", func(data json.RawMessage) bool {
		var ev node.Event
		json.Unmarshal(data, &ev)
		if ev.Collection == "app.todo" {
			n++
		}
		return n < 3
	})
	if err != nil || n != 3 {
		t.Fatalf("SSE: %d events, %v", n, err)
	}
}

func TestAPILiveQuery(t *testing.T) {
	f := newFixture(t)
	_, b := f.do("POST", "/v1/spaces", f.token, []byte(`{"name":"live"}`))
	var sp struct{ ID string }
	json.Unmarshal(b, &sp)
	base := "/v1/spaces/" + sp.ID
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.srv.URL, "http")+base+"/query/live?q="+url.QueryEscape(`{"collection":"app.todo"}`),
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + f.token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow() // the live query started before the handshake was answered
	var ids []string
	read := func() string {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ch node.QueryChange
		json.Unmarshal(msg, &ch)
		var e struct{ ID string }
		json.Unmarshal(ch.Entry, &e)
		ids = append(ids, e.ID)
		return ch.Kind
	}
	put := func(body string) string {
		_, b := f.do("POST", base+"/records", f.token, []byte(body))
		var v struct{ ID string }
		json.Unmarshal(b, &v)
		return v.ID
	}
	_, b = f.do("POST", base+"/records", f.token, []byte(`{"collection":"app.todo","body":{"n":1}}`))
	var v struct{ Key, ID string }
	json.Unmarshal(b, &v)
	kinds := []string{read()}
	put(`{"collection":"app.other","body":{}}`)
	second := put(`{"collection":"app.todo","key":"` + v.Key + `","body":{"n":2}}`)
	kinds = append(kinds, read())
	f.do("DELETE", base+"/records/"+v.Key, f.token, nil)
	kinds = append(kinds, read())
	if strings.Join(kinds, ",") != "enter,change,leave" || ids[0] != v.ID || ids[1] != second || ids[2] != second {
		t.Fatalf("the live query's changes: %v, versions %v (want %s, %s, %s)", kinds, ids, v.ID, second, second)
	}
	for _, c := range []struct{ q, code string }{
		{"%7B", index.CodeJSON},
		{url.QueryEscape(`{"collection":"app.todo","limit":5}`), index.CodeLive},
	} {
		if st, b := f.do("GET", base+"/query/live?q="+c.q, f.token, nil); st != 400 || code(b) != c.code {
			t.Errorf("a live query %s: %d %s, want 400 %s", c.q, st, b, c.code)
		}
	}
}

func TestAPIOnAUnixSocketAndLoopbackOnly(t *testing.T) {
	f := newFixture(t)
	s, err := api.New(f.n, nil)
	if err != nil {
		t.Fatal(err)
	}
	sock := t.TempDir() + "/api.sock"
	ln, url, err := api.Listen("unix:" + sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, url) }()
	c, err := api.Dial(context.Background(), f.n.Dir())
	for deadline := time.Now().Add(time.Minute); err != nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		c, err = api.Dial(context.Background(), f.n.Dir())
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(context.Background(), "GET", "/v1/node", nil); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := api.Dial(context.Background(), f.n.Dir()); err != api.ErrNotRunning {
		t.Fatalf("after the server stopped, Dial: %v", err)
	}
	if _, _, err := api.Listen("0.0.0.0:0"); err == nil {
		t.Fatal("the API listened on every interface")
	}
}

// A stream the node ends says why: an SSE stream's last event is an error
// the client returns, a WebSocket is closed as "try again later" with the
// error's code. Here the node closes under both.
func TestAPIStreamsSayWhyTheyEnd(t *testing.T) {
	f := newFixture(t)
	_, b := f.do("POST", "/v1/spaces", f.token, []byte(`{"name":"ending"}`))
	var sp struct{ ID string }
	json.Unmarshal(b, &sp)
	if st, b := f.do("POST", "/v1/spaces/"+sp.ID+"/records", f.token, []byte(`{"collection":"app.a","body":{}}`)); st != 201 {
		t.Fatalf("put: %d %s", st, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.srv.URL, "http")+"/v1/events?after=0",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + f.token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	sse := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		sse <- api.NewClient(f.srv.URL, f.token).Events(ctx, "/v1/events?after=0", func(json.RawMessage) bool {
			select {
			case <-started:
			default:
				close(started)
			}
			return true
		})
	}()
	<-started // the stream replays the put: it is open
	f.n.Close()
	var ae *api.Error
	if err := <-sse; !errors.As(err, &ae) || ae.Code != api.CodeClosed {
		t.Fatalf("the SSE stream ended with %v, want the error %s", err, api.CodeClosed)
	}
	var last []byte
	for {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusTryAgainLater || !strings.Contains(string(last), api.CodeClosed) {
				t.Fatalf("the WebSocket ended with %v after %s, want 1013 after the error %s", err, last, api.CodeClosed)
			}
			return
		}
		last = msg
	}
}
