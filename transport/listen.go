package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ListenOptions say how [Listen] serves. nil: plain, on loopback only,
// with the default limits.
type ListenOptions struct {
	// CertFile and KeyFile, both or neither, are PEM files of the TLS
	// certificate chain and its key (`minca serve --tls-cert/--tls-key`).
	CertFile, KeyFile string
	// MaxConns bounds the sockets open at once (HTTP and upgraded alike);
	// one past it is closed as soon as it is accepted, so the process
	// never runs out of file descriptors. Default 2048.
	MaxConns int
	// MaxConnsPerAddr bounds them per source address ([AddrOf]).
	// Default 64.
	MaxConnsPerAddr int
	// IdleTimeout closes a kept-alive HTTP connection that sends no next
	// request for this long. Default 30 s.
	IdleTimeout time.Duration
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
// connect with wss://, verified and bound to the TLS session; and a plain
// listener answers only requests whose Host is a loopback name, so a web
// page whose name was rebound to 127.0.0.1 is refused (HTTP 421). The
// server's header timeout and size bound slow or oversized requests before
// any WebSocket upgrade; its idle timeout and connection caps bound the
// sockets held.
func Listen(addr string, h http.Handler, lo *ListenOptions) (*Listener, error) {
	var opts ListenOptions
	if lo != nil {
		opts = *lo
	}
	if (opts.CertFile == "") != (opts.KeyFile == "") {
		return nil, errors.New("minca/transport: listen: give both a TLS certificate and its key, or neither")
	}
	if opts.MaxConns == 0 {
		opts.MaxConns = 2048
	}
	if opts.MaxConnsPerAddr == 0 {
		opts.MaxConnsPerAddr = 64
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = defaultHTTPIdle
	}
	if opts.MaxConns < 0 || opts.MaxConnsPerAddr < 0 || opts.IdleTimeout < 0 {
		return nil, fmt.Errorf("minca/transport: listen: MaxConns %d, MaxConnsPerAddr %d and IdleTimeout %v must not be negative", opts.MaxConns, opts.MaxConnsPerAddr, opts.IdleTimeout)
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
	} else {
		h = LoopbackHostOnly(h, nil)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("minca/transport: listen: %w", err)
	}
	ln = LimitListener(ln, opts.MaxConns, opts.MaxConnsPerAddr)
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	return serveIdle(ln, h, useTLS, opts.IdleTimeout), nil
}

// defaultHTTPIdle is ListenOptions.IdleTimeout's default.
const defaultHTTPIdle = 30 * time.Second

// serveOn serves h on a listener already open (TLS already layered on
// when useTLS).
func serveOn(ln net.Listener, h http.Handler, useTLS bool) *Listener {
	return serveIdle(ln, h, useTLS, defaultHTTPIdle)
}

func serveIdle(ln net.Listener, h http.Handler, useTLS bool, idle time.Duration) *Listener {
	l := &Listener{
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idle,
			MaxHeaderBytes: 16 << 10, ErrorLog: slogErrorLog()},
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

// LoopbackHostOnly serves h only to requests whose Host header names
// this machine's loopback (localhost, 127.0.0.0/8, ::1, with any port) or
// one of hosts; any other gets HTTP 421. A browser sends the name it
// resolved, so a web page whose name was rebound to 127.0.0.1 (DNS
// rebinding) is refused.
func LoopbackHostOnly(h http.Handler, hosts []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hn, _, err := net.SplitHostPort(host); err == nil {
			host = hn
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		ok := loopbackHost(host)
		for _, a := range hosts {
			ok = ok || strings.EqualFold(a, host) || strings.EqualFold(a, r.Host)
		}
		if !ok {
			http.Error(w, "this server answers only requests for a loopback host name", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// LimitListener accepts at most max connections open at once, and at
// most perAddr from one source address ([AddrOf]); one past either is
// closed as soon as it is accepted, so the kernel's queue keeps moving
// and the process keeps file descriptors for its own work. 0 means no
// limit.
func LimitListener(ln net.Listener, max, perAddr int) net.Listener {
	return &limitListener{Listener: ln, max: max, perAddr: perAddr, by: map[string]int{}}
}

type limitListener struct {
	net.Listener
	max, perAddr int

	mu   sync.Mutex
	open int
	by   map[string]int
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := AddrOf(c.RemoteAddr().String())
		l.mu.Lock()
		full := l.max > 0 && l.open >= l.max || l.perAddr > 0 && l.by[addr] >= l.perAddr
		if !full {
			l.open++
			l.by[addr]++
		}
		l.mu.Unlock()
		if full {
			c.Close()
			continue
		}
		return &limitedConn{Conn: c, l: l, addr: addr}, nil
	}
}

func (l *limitListener) release(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.by[addr]--; l.by[addr] == 0 {
		delete(l.by, addr)
	}
}

// Open is how many connections the listener holds now.
func (l *limitListener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

type limitedConn struct {
	net.Conn
	l    *limitListener
	addr string
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.addr) })
	return err
}
