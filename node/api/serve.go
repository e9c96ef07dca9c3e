package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minca-go/minca/internal/atomicfile"
	"github.com/minca-go/minca/transport"
)

// AddressName is the file in the node directory that says where the
// node's API listens while it runs: {"url": "http://127.0.0.1:PORT"} or
// {"url": "unix:PATH"}.
const AddressName = "api.json"

// DefaultListen is where `minca serve` listens with no --listen.
const DefaultListen = "127.0.0.1:7465"

// Listen opens the listener an address names: "unix:PATH" for a Unix
// socket (mode 0600), else a TCP address that must be on the loopback
// interface.
func Listen(addr string) (net.Listener, string, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		os.Remove(path) // a socket left by a node that died
		ln, err := net.Listen("unix", path)
		if err != nil {
			return nil, "", err
		}
		if err := os.Chmod(path, 0o600); err != nil {
			ln.Close()
			return nil, "", err
		}
		return ln, "unix:" + path, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", fmt.Errorf("minca/api: listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, "", fmt.Errorf("minca/api: listen address %q: the API listens on the loopback interface only (127.0.0.1, ::1) or a Unix socket", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	return ln, "http://" + ln.Addr().String(), nil
}

// Serve serves the API on ln until ctx ends, writing where it listens to
// the node directory (AddressName) and removing it when done. When ctx
// ends it stops taking requests and waits up to 10 s for those under way;
// event streams are cut. On TCP it answers only requests for a loopback
// host name or one of Options.Hosts (HTTP 421 otherwise); it closes
// kept-alive connections idle for Options.IdleTimeout and holds at most
// Options.MaxConns at once.
func (s *Server) Serve(ctx context.Context, ln net.Listener, url string) error {
	addr := filepath.Join(s.n.Dir(), AddressName)
	b, _ := json.Marshal(map[string]any{"url": url, "pid": os.Getpid()})
	if err := atomicfile.WriteFile(addr, b, 0o600); err != nil {
		return err
	}
	defer os.Remove(addr)
	var h http.Handler = s
	if ln.Addr().Network() == "tcp" {
		// A browser on this machine may be asked, by a web page whose name
		// was rebound to 127.0.0.1, to call the API: it still lacks the
		// token, and is not answered at all.
		h = transport.LoopbackHostOnly(h, s.o.Hosts)
	}
	ln = transport.LimitListener(ln, s.o.MaxConns, 0)
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: s.o.IdleTimeout,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = hs.Close()
	}
	if e := <-errc; !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	return err
}
