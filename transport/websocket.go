package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

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

// NewWebSocketLink is a [Link] over an open WebSocket, one binary message a
// frame, reading frames of at most max bytes: for ends that dial or accept
// the WebSocket themselves (tests that play a hostile peer, custom
// headers) and then run [Handshake] over it.
func NewWebSocketLink(ws *websocket.Conn, max int) Link { return newWSLink(ws, max) }

func newWSLink(ws *websocket.Conn, max int) *wsLink {
	// One byte past the limit, so a frame over it is ours to name.
	ws.SetReadLimit(int64(max) + 1)
	return &wsLink{ws: ws}
}

func (l *wsLink) ReadFrame(ctx context.Context, max int) ([]byte, error) {
	f, err := l.readFrame(ctx, max, nil)
	return f.b, err
}

// readFrame reads a message into a pooled buffer (framebuf.go): the
// frame is received with the one copy out of the socket.
func (l *wsLink) readFrame(ctx context.Context, max int, place func([]byte) int) (Frame, error) {
	typ, r, err := l.ws.Reader(ctx)
	if err != nil {
		return Frame{}, wsErr(err)
	}
	if typ != websocket.MessageBinary {
		return Frame{}, errorf(CodeFrameMalformed, "a text WebSocket message: frames are binary messages")
	}
	f, err := readPooled(r, max, place)
	if err != nil {
		return Frame{}, wsErr(err)
	}
	return f, nil
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
