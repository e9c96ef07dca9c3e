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
	s, err := NewServer(o, nil, func(ctx context.Context, c *Conn) {
		peers <- c.Peer()
		for {
			m, err := c.Recv(ctx)
			if err != nil {
				return
			}
			if c.Send(ctx, m) != nil {
				return
			}
		}
	})
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

func echo(t *testing.T, c *Conn, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
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
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, err := Dial(context.Background(), "ws://"+addr+PathPeer, &Options{Self: Carrier(newKey(t))})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("dialling a closed port: %v, want ErrUnreachable", err)
	}
}

// A client that redials finds the server again after it restarts on the
// same address.
func TestWebSocketReconnectAfterRestart(t *testing.T) {
	server, client := newAccount(t), newAccount(t)
	so := &Options{Self: server.session(hourFromNow(), 0)}
	s1, l1, _ := echoServer(t, so, nil)
	addr := l1.Addr().String()
	url := l1.URL(PathPeer)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	co := &Options{Self: client.session(hourFromNow(), 0)}
	conns := make(chan *Conn, 4)
	var mu sync.Mutex
	var errs []string
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
			&RedialOptions{Min: 20 * time.Millisecond, Max: 200 * time.Millisecond,
				OnError: func(err error, _ time.Duration) {
					mu.Lock()
					errs = append(errs, Code(err))
					mu.Unlock()
				}})
	}()
	first := <-conns
	echo(t, first, "before the restart")

	// Stop the server: its connections end, and dials fail for a while.
	l1.Close()
	s1.Close()
	<-first.Done()
	wantCode(t, first.Err(), CodeClosed, true)
	time.Sleep(300 * time.Millisecond)

	peers := make(chan Peer, 1)
	s2, err := NewServer(so, nil, func(ctx context.Context, c *Conn) {
		peers <- c.Peer()
		for {
			m, err := c.Recv(ctx)
			if err != nil || c.Send(ctx, m) != nil {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	mux := http.NewServeMux()
	mux.Handle(PathPeer, s2)
	l2, err := Listen(addr, mux, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	select {
	case second := <-conns:
		echo(t, second, "after the restart")
	case <-time.After(10 * time.Second):
		t.Fatal("no connection after the server came back")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Redial returned %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) < 2 {
		t.Fatalf("errors heard while the server was away: %v", errs)
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
// oldest: a proven peer is never turned away by silent ones.
func TestWebSocketSlowHandshakes(t *testing.T) {
	server := newAccount(t)
	s, err := NewServer(&Options{Self: server.session(hourFromNow(), 0), HandshakeTimeout: time.Minute},
		&ServerOptions{MaxHandshakes: 2}, func(context.Context, *Conn) {})
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
}
