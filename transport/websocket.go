package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// PathPeer is where a node accepts peers' WebSocket connections.
const PathPeer = "/minca"

// ErrUnreachable marks a dial that found no peer to speak to: the address
// refused, timed out, or did not upgrade to a WebSocket. Try again later.
var ErrUnreachable = errors.New("minca/transport: unreachable")

// wsLink is a Link over a WebSocket: one binary message is one frame.
type wsLink struct {
	ws *websocket.Conn
}

func newWSLink(ws *websocket.Conn, max int) *wsLink {
	// One byte past the limit, so a frame over it is ours to name.
	ws.SetReadLimit(int64(max) + 1)
	return &wsLink{ws: ws}
}

func (l *wsLink) ReadFrame(ctx context.Context, max int) ([]byte, error) {
	typ, r, err := l.ws.Reader(ctx)
	if err != nil {
		return nil, wsErr(err)
	}
	if typ != websocket.MessageBinary {
		return nil, errorf(CodeFrameMalformed, "a text WebSocket message: frames are binary messages")
	}
	buf, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, wsErr(err)
	}
	if len(buf) > max {
		return nil, errorf(CodeFrameTooLarge, "a frame of more than %d bytes; the limit is %d", max, max)
	}
	return buf, nil
}

func (l *wsLink) WriteFrame(ctx context.Context, f []byte) error {
	return wsErr(l.ws.Write(ctx, websocket.MessageBinary, f))
}

// Close sends a WebSocket close and waits a little for the peer's, so a
// bye written just before is read rather than lost to a reset.
func (l *wsLink) Close() error {
	return l.ws.Close(websocket.StatusNormalClosure, "")
}

// Abort closes the connection at once, with no closing handshake.
func (l *wsLink) Abort() error { return l.ws.CloseNow() }

func wsErr(err error) error {
	if err == nil {
		return nil
	}
	if s := websocket.CloseStatus(err); s == websocket.StatusMessageTooBig {
		return errorf(CodeFrameTooLarge, "a frame over the limit: %v", err)
	}
	return err
}

// ServerOptions bound what a [Server] takes on. nil means defaults.
type ServerOptions struct {
	// MaxConns is how many proven connections the server keeps at once;
	// past it, new ones are refused with HTTP 503. Default 1024.
	MaxConns int
	// MaxHandshakes is how many connections may be in hello or who at
	// once, so slow handshakes cannot crowd out proven peers. Default 64.
	MaxHandshakes int
	// Logger receives refusals at debug level. nil: none.
	Logger *slog.Logger
}

// Server accepts peers' WebSocket connections (at [PathPeer] when mounted
// there by the caller), proves each with who and hands it to its handler.
// It is an http.Handler, so `minca serve` mounts it beside its relay.
type Server struct {
	o       *resolved
	handle  func(context.Context, *Conn)
	log     *slog.Logger
	pending chan struct{} // handshakes under way
	conns   chan struct{} // connections held
	ctx     context.Context
	cancel  context.CancelFunc

	mu     sync.Mutex // orders wg.Add before Close's wg.Wait; guards held
	closed bool
	held   map[*Conn]struct{} // proven connections, for Close to end first
	wg     sync.WaitGroup
}

// NewServer makes a Server. handle runs once per proven connection, on its
// own goroutine; the connection is closed when it returns, and its ctx is
// done when the server closes.
func NewServer(opts *Options, sopts *ServerOptions, handle func(ctx context.Context, c *Conn)) (*Server, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	so := ServerOptions{}
	if sopts != nil {
		so = *sopts
	}
	if so.MaxConns == 0 {
		so.MaxConns = 1024
	}
	if so.MaxHandshakes == 0 {
		so.MaxHandshakes = 64
	}
	if so.MaxConns < 0 || so.MaxHandshakes < 0 {
		return nil, fmt.Errorf("minca/transport: server options: MaxConns %d and MaxHandshakes %d must not be negative", so.MaxConns, so.MaxHandshakes)
	}
	if so.Logger == nil {
		so.Logger = slog.New(slog.DiscardHandler)
	}
	if handle == nil {
		return nil, errors.New("minca/transport: NewServer: a handler is required")
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		o: o, handle: handle, log: so.Logger,
		pending: make(chan struct{}, so.MaxHandshakes),
		conns:   make(chan struct{}, so.MaxConns),
		ctx:     ctx, cancel: cancel,
		held: make(map[*Conn]struct{}),
	}, nil
}

// ServeHTTP upgrades the request to a WebSocket, runs who as the
// responder and serves the connection until the handler returns.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "closing", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	select {
	case s.conns <- struct{}{}:
		defer func() { <-s.conns }()
	default:
		http.Error(w, "too many connections", http.StatusServiceUnavailable)
		return
	}
	select {
	case s.pending <- struct{}{}:
	default:
		http.Error(w, "too many handshakes under way", http.StatusServiceUnavailable)
		return
	}
	released := false
	release := func() {
		if !released {
			released = true
			<-s.pending
		}
	}
	defer release()

	binding := Binding{Kind: BindingNone}
	if r.TLS != nil {
		b, err := TLSBinding(r.TLS)
		if err != nil {
			http.Error(w, "no TLS exporter", http.StatusBadRequest)
			return
		}
		binding = b
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept wrote the response
	}
	c, err := handshake(s.ctx, newWSLink(ws, s.o.MaxFrame), s.o, HandshakeOptions{Role: Responder, Binding: binding})
	release()
	if err != nil {
		s.log.Debug("refused a peer", "remote", r.RemoteAddr, "reason", Code(err), "err", err)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	s.held[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.held, c)
		s.mu.Unlock()
		c.Close()
	}()
	s.handle(s.ctx, c)
}

// Close ends every connection the server holds with conn/closed, telling
// each peer in a bye, then ends the handlers' context and waits for them
// to return. The connections end first so that a handler's send cut short
// by its context does not end one as broken (with no bye) instead. It
// does not close the listener beneath.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	held := make([]*Conn, 0, len(s.held))
	for c := range s.held {
		held = append(held, c)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range held {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close()
		}()
	}
	wg.Wait()
	s.cancel()
	s.wg.Wait()
	return nil
}

// Dial opens a WebSocket to a peer's ws:// or wss:// URL and runs who as
// the initiator. wss:// servers are verified against opts.RootCAs (the
// system roots when nil); ws:// is only for loopback hosts. Dialling and
// the handshake together are bounded by HandshakeTimeout. A dial that
// reaches no peer wraps ErrUnreachable; a refusal in who is an *Error.
func Dial(ctx context.Context, rawURL string, opts *Options) (*Conn, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("minca/transport: peer URL %q: %w", rawURL, err)
	}
	switch u.Scheme {
	case "wss":
	case "ws":
		if !loopbackHost(u.Hostname()) {
			return nil, fmt.Errorf("minca/transport: peer URL %q: ws:// is for loopback hosts only; use wss://", rawURL)
		}
	default:
		return nil, fmt.Errorf("minca/transport: peer URL %q: the scheme is ws or wss", rawURL)
	}
	dctx, cancel := context.WithTimeout(ctx, o.HandshakeTimeout)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}},
		DisableKeepAlives: true,
		Proxy:             http.ProxyFromEnvironment,
	}}
	ws, resp, err := websocket.Dial(dctx, rawURL, &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		var cv *tls.CertificateVerificationError
		if errors.As(err, &cv) {
			return nil, fmt.Errorf("minca/transport: dialling %s: the server's certificate does not verify: %w", rawURL, err)
		}
		return nil, fmt.Errorf("minca/transport: dialling %s: %w: %w", rawURL, ErrUnreachable, err)
	}
	binding := Binding{Kind: BindingNone}
	if u.Scheme == "wss" {
		if resp == nil || resp.TLS == nil {
			ws.CloseNow()
			return nil, fmt.Errorf("minca/transport: dialling %s: no TLS state for the channel binding", rawURL)
		}
		if binding, err = TLSBinding(resp.TLS); err != nil {
			ws.CloseNow()
			return nil, err
		}
	}
	return handshake(dctx, newWSLink(ws, o.MaxFrame), o, HandshakeOptions{Role: Initiator, Binding: binding})
}

// loopbackHost reports whether host names this machine's loopback.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ListenOptions say how [Listen] serves. nil: plain, on loopback only.
type ListenOptions struct {
	// CertFile and KeyFile, both or neither, are PEM files of the TLS
	// certificate chain and its key (`minca serve --tls-cert/--tls-key`).
	CertFile, KeyFile string
}

// Listener serves an http.Handler on an address: plain on loopback, TLS
// elsewhere. `minca serve --listen ADDR` runs one.
type Listener struct {
	srv *http.Server
	ln  net.Listener
	tls bool
	err chan error

	closeOnce sync.Once
	closeErr  error
}

// Listen starts serving h on addr ("127.0.0.1:0" picks a port). It refuses
// a plain listener on an address that is not loopback: peers elsewhere
// connect with wss://, verified and bound to the TLS session. The
// server's header timeout and size bound slow or oversized requests before
// any WebSocket upgrade.
func Listen(addr string, h http.Handler, lo *ListenOptions) (*Listener, error) {
	var opts ListenOptions
	if lo != nil {
		opts = *lo
	}
	if (opts.CertFile == "") != (opts.KeyFile == "") {
		return nil, errors.New("minca/transport: listen: give both a TLS certificate and its key, or neither")
	}
	useTLS := opts.CertFile != ""
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("minca/transport: listen address %q: %w", addr, err)
	}
	if !useTLS && !loopbackHost(host) {
		return nil, fmt.Errorf("minca/transport: listen address %q is not loopback: a plain listener serves loopback only; give a TLS certificate and key", addr)
	}
	var cfg *tls.Config
	if useTLS {
		cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("minca/transport: listen: TLS certificate: %w", err)
		}
		cfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("minca/transport: listen: %w", err)
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	return serveOn(ln, h, useTLS), nil
}

// serveOn serves h on a listener already open (TLS already layered on
// when useTLS).
func serveOn(ln net.Listener, h http.Handler, useTLS bool) *Listener {
	l := &Listener{
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 16 << 10,
			ErrorLog: slogErrorLog()},
		ln: ln, tls: useTLS, err: make(chan error, 1),
	}
	go func() { l.err <- l.srv.Serve(ln) }()
	return l
}

// Addr is the address served, with the port chosen.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// URL is the ws:// or wss:// URL of path on this listener.
func (l *Listener) URL(path string) string {
	scheme := "ws"
	if l.tls {
		scheme = "wss"
	}
	return scheme + "://" + l.ln.Addr().String() + path
}

// Close stops accepting and closes idle HTTP connections. Upgraded
// WebSockets are the handler's to end ([Server.Close], [Relay.Close]).
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = l.srv.Close()
		<-l.err
	})
	return l.closeErr
}
