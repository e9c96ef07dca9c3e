package transport

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// echoServer serves PathPeer, echoing every message back, and reports
// each proven peer.
func echoServer(t *testing.T, o *Options, lo *ListenOptions) (*Server, *Listener, chan Peer) {
	t.Helper()
	peers := make(chan Peer, 16)
	s, err := NewServer(o, nil, echoHandler(peers))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(PathPeer, s)
	l, err := Listen("127.0.0.1:0", mux, lo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); s.Close() })
	return s, l, peers
}

// echoHandler echoes every message back, reporting the peer on peers
// when that is not nil.
func echoHandler(peers chan<- Peer) func(context.Context, *Conn) {
	return func(ctx context.Context, c *Conn) {
		if peers != nil {
			peers <- c.Peer()
		}
		for {
			m, err := c.Recv(ctx)
			if err != nil || c.Send(ctx, m) != nil {
				return
			}
		}
	}
}

func echo(t *testing.T, c *Conn, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Send(ctx, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	got, err := c.Recv(ctx)
	if err != nil || string(got) != msg {
		t.Fatalf("echo of %q: %q, %v", msg, got, err)
	}
}

func TestWebSocketPlain(t *testing.T) {
	server, client := newAccount(t), newAccount(t)
	ss, sc := server.session(hourFromNow(), 0), client.session(hourFromNow(), 0)
	_, l, peers := echoServer(t, &Options{Self: ss}, nil)
	c, err := Dial(context.Background(), l.URL(PathPeer), &Options{Self: sc})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if p := c.Peer(); p.DID != ss.DID() || p.Root != server.root.DID() || p.Binding != BindingNone {
		t.Fatalf("the client sees %+v", p)
	}
	if p := <-peers; p.DID != sc.DID() || p.Root != client.root.DID() {
		t.Fatalf("the server sees %+v", p)
	}
	echo(t, c, "over a plain WebSocket")
	big := strings.Repeat("x", c.MaxMessage())
	echo(t, c, big)
}

// testCA makes a CA and a certificate for 127.0.0.1 signed by it, written
// as PEM files; it returns the files and a pool holding the CA.
func testCA(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "minca test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	kb, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	pool = x509.NewCertPool()
	pool.AddCert(ca)
	return certFile, keyFile, pool
}

func TestWebSocketTLS(t *testing.T) {
	certFile, keyFile, pool := testCA(t)
	server, client := newAccount(t), newAccount(t)
	_, l, peers := echoServer(t, &Options{Self: server.session(hourFromNow(), 0)}, &ListenOptions{CertFile: certFile, KeyFile: keyFile})
	if !strings.HasPrefix(l.URL(PathPeer), "wss://") {
		t.Fatalf("URL %s", l.URL(PathPeer))
	}
	c, err := Dial(context.Background(), l.URL(PathPeer), &Options{Self: client.session(hourFromNow(), 0), RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Peer().Binding != BindingTLS {
		t.Fatalf("binding %q, want %q", c.Peer().Binding, BindingTLS)
	}
	if p := <-peers; p.Binding != BindingTLS {
		t.Fatalf("the server's binding %q", p.Binding)
	}
	echo(t, c, "over TLS")

	// The system roots do not know the test CA.
	_, err = Dial(context.Background(), l.URL(PathPeer), &Options{Self: client.session(hourFromNow(), 0)})
	if err == nil || errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("dialling a server the roots do not vouch for: %v", err)
	}
}

func TestPlainOnlyOnLoopback(t *testing.T) {
	if _, err := Listen("0.0.0.0:0", http.NotFoundHandler(), nil); err == nil {
		t.Fatal("a plain listener on every address")
	}
	if _, err := Listen("127.0.0.1:0", http.NotFoundHandler(), &ListenOptions{CertFile: "x"}); err == nil {
		t.Fatal("a certificate with no key")
	}
	_, err := Dial(context.Background(), "ws://peer.example:80/minca", &Options{Self: Carrier(newKey(t))})
	if err == nil || errors.Is(err, ErrUnreachable) {
		t.Fatalf("ws:// to a host off loopback: %v", err)
	}
}

func TestDialUnreachable(t *testing.T) {
	// Port 1: privileged, so no test server can be there, unlike a port
	// freed by closing a listener, which another test may take.
	_, err := Dial(context.Background(), "ws://127.0.0.1:1"+PathPeer, &Options{Self: Carrier(newKey(t))})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("dialling a closed port: %v, want ErrUnreachable", err)
	}
}

// A client that redials finds the server again after it restarts on the
// same address. Each step waits for the event it needs: the old
// connection's end, two failed dials while the server is away, the new
// connection.
func TestWebSocketReconnectAfterRestart(t *testing.T) {
	server, client := newAccount(t), newAccount(t)
	so := &Options{Self: server.session(hourFromNow(), 0)}
	port := holdPort(t)
	startServer := func() (*Server, *Listener) {
		s, err := NewServer(so, nil, echoHandler(nil))
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle(PathPeer, s)
		l := port.serve(mux)
		t.Cleanup(func() { l.Close(); s.Close() })
		return s, l
	}
	s1, l1 := startServer()
	url := l1.URL(PathPeer)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	co := &Options{Self: client.session(hourFromNow(), 0)}
	conns := make(chan *Conn, 4)
	var mu sync.Mutex
	var heard []error
	told := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- Redial(ctx, func(ctx context.Context) (*Conn, error) { return Dial(ctx, url, co) },
			func(ctx context.Context, c *Conn) {
				conns <- c
				select {
				case <-c.Done():
				case <-ctx.Done():
				}
			},
			&RedialOptions{Min: time.Millisecond, Max: 20 * time.Millisecond,
				OnError: func(err error, _ time.Duration) {
					mu.Lock()
					heard = append(heard, err)
					mu.Unlock()
					select {
					case told <- struct{}{}:
					default:
					}
				}})
	}()
	first := within(t, conns, "the first connection")
	echo(t, first, "before the restart")

	// Stop the server: its connection ends with a bye, and dials fail
	// until it is back.
	s1.Close()
	l1.Close()
	within(t, first.Done(), "the end of the first connection")
	wantCode(t, first.Err(), CodeClosed, true)
	failedDials := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, err := range heard {
			if errors.Is(err, ErrUnreachable) {
				n++
			}
		}
		return n
	}
	for failedDials() < 2 {
		within(t, told, "two failed dials while the server is away")
	}

	startServer()
	second := within(t, conns, "a connection after the server came back")
	echo(t, second, "after the restart")
	cancel()
	if err := within(t, done, "Redial's return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Redial returned %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if wantCode(t, heard[0], CodeClosed, true); len(heard) < 3 {
		t.Fatalf("errors heard: %v", heard)
	}
	for _, err := range heard[1:] {
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("a dial to the stopped server: %v, want ErrUnreachable", err)
		}
	}
}

// Server.Close ends each connection with a bye before it ends the
// handlers' context, so a handler cut short in a send does not end its
// connection as broken: every peer learns the server closed, and every
// handler sees its connection ended by the time its context is.
func TestServerCloseEndsConnectionsFirst(t *testing.T) {
	const n = 16
	server, client := newAccount(t), newAccount(t)
	started := make(chan struct{}, n)
	atCancel := make(chan error, n)
	s, err := NewServer(&Options{Self: server.session(hourFromNow(), 0)}, nil, func(ctx context.Context, c *Conn) {
		started <- struct{}{}
		<-ctx.Done()
		atCancel <- c.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Listen("127.0.0.1:0", s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	co := &Options{Self: client.session(hourFromNow(), 0)}
	var conns []*Conn
	for range n {
		c, err := Dial(context.Background(), l.URL(PathPeer), co)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
		within(t, started, "the handler")
	}
	s.Close()
	for range n {
		if err := within(t, atCancel, "the handler's context"); Code(err) != CodeClosed {
			t.Fatalf("a handler's context ended while its connection had %v, want it ended with %s first", err, CodeClosed)
		}
	}
	for _, c := range conns {
		_, err := c.Recv(context.Background())
		wantCode(t, err, CodeClosed, true)
	}
}

// dialRaw opens a WebSocket with no who of our own, for tests that play a
// hostile client.
func dialRaw(t *testing.T, url string) Link {
	t.Helper()
	ws, _, err := websocket.Dial(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(-1)
	t.Cleanup(func() { ws.CloseNow() })
	return &wsLink{ws: ws}
}

func TestWebSocketFrames(t *testing.T) {
	server := newAccount(t)
	for _, tc := range []struct {
		name string
		send func(ws *websocket.Conn)
		code string
	}{
		{"a frame over the limit", func(ws *websocket.Conn) {
			ws.Write(context.Background(), websocket.MessageBinary, make([]byte, MinFrame+1))
		}, CodeFrameTooLarge},
		{"a text message", func(ws *websocket.Conn) {
			ws.Write(context.Background(), websocket.MessageText, []byte(`{"type":"hello"}`))
		}, CodeFrameMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused := make(chan string, 1)
			s, _ := NewServer(&Options{Self: server.session(hourFromNow(), 0), MaxFrame: MinFrame}, &ServerOptions{Logger: nil}, func(context.Context, *Conn) {})
			defer s.Close()
			l, _ := Listen("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s.ServeHTTP(w, r)
				refused <- "done"
			}), nil)
			defer l.Close()
			link := dialRaw(t, l.URL(PathPeer))
			ws := link.(*wsLink).ws
			// The server's hello first, then ours misbehaves.
			if _, err := link.ReadFrame(context.Background(), DefaultFrame); err != nil {
				t.Fatal(err)
			}
			tc.send(ws)
			f, err := link.ReadFrame(context.Background(), DefaultFrame)
			if err != nil {
				t.Fatalf("no bye: %v", err)
			}
			c, err := decodeControl(f[1:])
			if err != nil || c.Type != typeBye || c.Code != tc.code {
				t.Fatalf("told %+v (%v), want a bye with %s", c, err, tc.code)
			}
			ws.CloseNow()
			<-refused
		})
	}
}

// A client that upgrades and then says nothing holds a handshake slot only
// until HandshakeTimeout, or until every slot is taken and it is the
// oldest: a proven peer is never turned away by silent ones. The test
// waits for the server's word that the oldest was refused.
func TestWebSocketSlowHandshakes(t *testing.T) {
	server := newAccount(t)
	refused := make(chan string, 4)
	s, err := NewServer(&Options{Self: server.session(hourFromNow(), 0), HandshakeTimeout: time.Minute},
		&ServerOptions{MaxHandshakes: 2, Logger: slog.New(reasons(refused))}, func(context.Context, *Conn) {})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, _ := Listen("127.0.0.1:0", s, nil)
	defer l.Close()
	dialRaw(t, l.URL(PathPeer))
	dialRaw(t, l.URL(PathPeer))
	c, err := Dial(context.Background(), l.URL(PathPeer), &Options{Self: Carrier(newKey(t))})
	if err != nil {
		t.Fatalf("with every handshake slot held by silent clients: %v", err)
	}
	c.Close()
	if r := within(t, refused, "the oldest handshake's refusal"); r != CodeWhoTimeout {
		t.Fatalf("the oldest handshake refused with %s, want %s", r, CodeWhoTimeout)
	}
}

// reasons is a log handler that passes on the reason of each record that
// has one.
type reasons chan<- string

func (r reasons) Enabled(context.Context, slog.Level) bool { return true }
func (r reasons) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r reasons) WithGroup(string) slog.Handler            { return r }
func (r reasons) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "reason" {
			r <- a.Value.String()
		}
		return true
	})
	return nil
}
