package transport

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// fromAddr is an HTTP client whose connections come from src, one of the
// loopback addresses (127.0.0.2 …): a second machine, as the server
// counts them.
func fromAddr(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// silent upgrades a WebSocket from src and says nothing: a handshake slot
// held. It returns the link to read what the server says.
func silent(t *testing.T, url, src string) (Link, *http.Response, error) {
	t.Helper()
	ws, resp, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{HTTPClient: fromAddr(src)})
	if err != nil {
		return nil, resp, err
	}
	ws.SetReadLimit(-1)
	t.Cleanup(func() { ws.CloseNow() })
	return &wsLink{ws: ws}, resp, nil
}

// dialFrom runs who from src with a throwaway key.
func dialFrom(t *testing.T, url, src string) (*Conn, error) {
	t.Helper()
	ws, _, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{HTTPClient: fromAddr(src)})
	if err != nil {
		return nil, err
	}
	c, err := Handshake(context.Background(), NewWebSocketLink(ws, DefaultFrame), &Options{Self: Carrier(newKey(t))}, HandshakeOptions{Role: Initiator})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func limitServer(t *testing.T, o *Options, so *ServerOptions) *Listener {
	t.Helper()
	if o == nil {
		o = &Options{}
	}
	o.Self = Carrier(newKey(t))
	s, err := NewServer(o, so, func(ctx context.Context, c *Conn) { <-ctx.Done() })
	if err != nil {
		t.Fatal(err)
	}
	l, err := Listen("127.0.0.1:0", s, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); s.Close() })
	return l
}

func wantStatus(t *testing.T, resp *http.Response, err error, status int) {
	t.Helper()
	if err == nil || resp == nil || resp.StatusCode != status {
		code := 0
		if resp != nil {
			code = resp.StatusCode
		}
		t.Fatalf("answered %d (%v), want %d", code, err, status)
	}
}

// readBye reads frames until a bye and returns its code.
func readBye(t *testing.T, l Link, within time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		f, err := l.ReadFrame(ctx, 1<<20)
		if err != nil {
			t.Fatalf("no bye: %v", err)
		}
		if f[0] != kindControl {
			continue
		}
		c, err := decodeControl(f[1:])
		if err == nil && c.Type == typeBye {
			return c.Code
		}
	}
}

// Silent sockets from one address hold at most MaxHandshakesPerAddr
// slots; the next from it is refused, and a peer from another address
// still connects at once.
func TestServerHandshakesPerAddress(t *testing.T) {
	l := limitServer(t, &Options{HandshakeTimeout: time.Minute}, &ServerOptions{MaxHandshakesPerAddr: 4})
	for range 4 {
		if _, _, err := silent(t, l.URL(PathPeer), "127.0.0.2"); err != nil {
			t.Fatal(err)
		}
	}
	_, resp, err := silent(t, l.URL(PathPeer), "127.0.0.2")
	wantStatus(t, resp, err, http.StatusServiceUnavailable)
	if _, err := dialFrom(t, l.URL(PathPeer), "127.0.0.1"); err != nil {
		t.Fatalf("an honest peer from another address: %v", err)
	}
}

// When every handshake slot is held, the oldest handshake is ended with
// who/timeout, said in a bye, and the newcomer is served.
func TestServerOldestHandshakeDropped(t *testing.T) {
	l := limitServer(t, &Options{HandshakeTimeout: time.Minute}, &ServerOptions{MaxHandshakes: 6, MaxHandshakesPerAddr: 100})
	var held []Link
	for i := range 6 {
		lk, _, err := silent(t, l.URL(PathPeer), fmt.Sprintf("127.0.0.%d", 2+i%3))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, lk)
		time.Sleep(5 * time.Millisecond) // an order of arrival
	}
	start := time.Now()
	if _, err := dialFrom(t, l.URL(PathPeer), "127.0.0.1"); err != nil {
		t.Fatalf("an honest peer with every slot held: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the honest peer waited %v", d)
	}
	if code := readBye(t, held[0], 5*time.Second); code != CodeWhoTimeout {
		t.Fatalf("the oldest silent handshake was told %s, want %s", code, CodeWhoTimeout)
	}
}

// Proven connections from one address are bounded too: throwaway keys
// from one machine cannot fill the server.
func TestServerConnsPerAddress(t *testing.T) {
	l := limitServer(t, nil, &ServerOptions{MaxConnsPerAddr: 5})
	for i := range 5 {
		if _, err := dialFrom(t, l.URL(PathPeer), "127.0.0.2"); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	_, resp, err := silent(t, l.URL(PathPeer), "127.0.0.2")
	wantStatus(t, resp, err, http.StatusServiceUnavailable)
	if _, err := dialFrom(t, l.URL(PathPeer), "127.0.0.1"); err != nil {
		t.Fatalf("an honest peer from another address: %v", err)
	}
}

// Throwaway keys from one address, each connection proven and closed at
// once so no count of connections held ever fills: past a burst, new
// connections from that address are refused before the upgrade (HTTP 429,
// with when to try again), at the address's rate after it, and a peer
// from another address still connects.
func TestServerNewConnRatePerAddress(t *testing.T) {
	const burst, perSecond = 10, 0.5
	l := limitServer(t, nil, &ServerOptions{ConnRatePerAddr: perSecond, ConnBurstPerAddr: burst})
	accepted := 0
	var refused *http.Response
	start := time.Now()
	for range 3 * burst {
		c, err := dialFrom(t, l.URL(PathPeer), "127.0.0.2")
		if err != nil {
			_, resp, err := silent(t, l.URL(PathPeer), "127.0.0.2")
			wantStatus(t, resp, err, http.StatusTooManyRequests)
			refused = resp
			break
		}
		accepted++
		c.Close()
	}
	// What came back at the rate while dialling counts too.
	if allowed := burst + int(time.Since(start).Seconds()*perSecond) + 1; refused == nil || accepted > allowed {
		t.Fatalf("%d connections from one address in a row were let in; the burst is %d", accepted, burst)
	}
	if refused.Header.Get("Retry-After") == "" {
		t.Error("a refusal without Retry-After")
	}
	if _, err := dialFrom(t, l.URL(PathPeer), "127.0.0.1"); err != nil {
		t.Fatalf("an honest peer from another address: %v", err)
	}
	time.Sleep(time.Duration(1.1 / perSecond * float64(time.Second))) // a token back
	if _, err := dialFrom(t, l.URL(PathPeer), "127.0.0.2"); err != nil {
		t.Fatalf("the address after a token came back: %v", err)
	}
}

// A handshake that runs out of time is told so: a bye with who/timeout,
// not a bare end of the stream.
func TestHandshakeTimeoutSaysBye(t *testing.T) {
	l := limitServer(t, &Options{HandshakeTimeout: 300 * time.Millisecond}, nil)
	lk, _, err := silent(t, l.URL(PathPeer), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if code := readBye(t, lk, 5*time.Second); code != CodeWhoTimeout {
		t.Fatalf("told %s, want %s", code, CodeWhoTimeout)
	}
}

// A browser's connection from a web page is refused unless its origin is
// listed (DNS rebinding makes any page's Host the server's); a program
// sends no Origin and connects.
func TestServerRefusesForeignOrigin(t *testing.T) {
	l := limitServer(t, nil, &ServerOptions{Origins: []string{"https://app.example"}})
	url := l.URL(PathPeer)
	for _, tc := range []struct {
		origin, host string
		status       int
	}{
		{"http://evil.example", "", http.StatusForbidden},
		{"http://" + l.Addr().String(), "", http.StatusForbidden},
		{"https://app.example", "", http.StatusSwitchingProtocols},
	} {
		h := http.Header{}
		h.Set("Origin", tc.origin)
		ws, resp, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{HTTPHeader: h})
		if tc.status == http.StatusSwitchingProtocols {
			if err != nil {
				t.Fatalf("origin %s: %v", tc.origin, err)
			}
			ws.CloseNow()
			continue
		}
		wantStatus(t, resp, err, tc.status)
	}
	if _, err := dialFrom(t, url, "127.0.0.1"); err != nil {
		t.Fatalf("a program: %v", err)
	}
}

// A plain listener answers only requests for a loopback host name, so a
// web page whose name was rebound to 127.0.0.1 is not served.
func TestListenerRefusesForeignHost(t *testing.T) {
	l, err := Listen("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for host, want := range map[string]int{"evil.example": http.StatusMisdirectedRequest, "evil.example:80": http.StatusMisdirectedRequest,
		l.Addr().String(): http.StatusOK, "localhost": http.StatusOK, "[::1]:9": http.StatusOK} {
		req, _ := http.NewRequest("GET", "http://"+l.Addr().String()+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// Kept-alive connections that send no next request are closed after the
// idle time, and past the caps new sockets are closed at once, so a flood
// of them never exhausts the process's file descriptors; a client from
// another address is still served.
func TestListenerIdleTimeoutAndCaps(t *testing.T) {
	l, err := Listen("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}), &ListenOptions{IdleTimeout: 3 * time.Second, MaxConns: 40, MaxConnsPerAddr: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	open := func(src string) (net.Conn, bool) {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		c, err := d.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			c.Close()
			return nil, false
		}
		resp.Body.Close()
		return c, true
	}
	var held []net.Conn
	served := 0
	for range 30 {
		if c, ok := open("127.0.0.2"); ok {
			held = append(held, c)
			served++
		}
	}
	if served != 20 {
		t.Fatalf("%d of 30 connections from one address served, want 20", served)
	}
	if _, ok := open("127.0.0.3"); !ok {
		t.Fatal("a client from another address was not served while one address held its share")
	}
	// The idle ones are closed by the server.
	for i, c := range held {
		c.SetReadDeadline(time.Now().Add(15 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || strings.Contains(err.Error(), "timeout") {
			t.Fatalf("kept-alive connection %d still open after the idle time: %v", i, err)
		}
	}
	if _, ok := open("127.0.0.2"); !ok {
		t.Fatal("after the idle ones closed, the address is not served again")
	}
}
