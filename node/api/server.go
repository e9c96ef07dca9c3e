// Package api is the node's local HTTP+JSON API (DESIGN.md, The node and
// its local API; docs/api.md): spaces, records, queries and live events for
// programs on the same machine, on 127.0.0.1 or a Unix socket, behind a
// bearer token kept 0600 in the node directory. [Server] serves a
// *node.Node; [Client] calls one. Every request body is bounded in size
// and nesting; every error is {"error": {"code", "message", "field"?}}
// with a stable code (docs/api.md, Errors).
package api

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/peers"
)

// TokenName is the API token's file in the node directory.
const TokenName = "api.token"

// Limits of a request (docs/api.md, Limits).
const (
	DefaultMaxBody  = 1 << 20 // bytes of a request body
	DefaultMaxDepth = 64      // nesting of a request body's JSON

	DefaultMaxConns    = 256              // connections open at once
	DefaultIdleTimeout = 30 * time.Second // a kept-alive connection idle this long is closed
)

// Options configure a [Server]; nil means the defaults.
type Options struct {
	// MaxBody bounds a request body in bytes. Default 1 MiB.
	MaxBody int64
	// MaxDepth bounds how deeply a request body's JSON nests. Default 64.
	MaxDepth int
	// Logger receives request failures. Default: discarded.
	Logger *slog.Logger
	// Hosts are host names, besides the loopback ones, that requests may
	// name in Host (a name this machine is reached by through a proxy).
	Hosts []string
	// MaxConns bounds the connections open at once; one past it is closed
	// as it is accepted. Default 256.
	MaxConns int
	// IdleTimeout closes a kept-alive connection idle this long.
	// Default 30 s.
	IdleTimeout time.Duration
	// Peers answers GET /v1/peers: the node's connections and sync
	// sessions (docs/sync.md §8). nil: the node keeps none, and the list
	// is empty.
	Peers PeerLister
}

// PeerLister is what the API reads of a node's peers; *peers.Peers is
// one.
type PeerLister interface {
	Status() []peers.Status
}

// Server is the API of one node. It is an http.Handler.
type Server struct {
	n     *node.Node
	token []byte
	o     Options
	mux   *http.ServeMux
}

// New makes the API of n, with the token in n's directory (made, 0600,
// when there is none).
func New(n *node.Node, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxBody < 0 || o.MaxDepth < 0 || o.MaxConns < 0 || o.IdleTimeout < 0 {
		return nil, errors.New("minca/api: Options: MaxBody, MaxDepth, MaxConns and IdleTimeout must not be negative")
	}
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxBody == 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxDepth == 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	tok, err := Token(n.Dir())
	if err != nil {
		return nil, err
	}
	s := &Server{n: n, token: []byte(tok), o: o, mux: http.NewServeMux()}
	s.routes()
	return s, nil
}

// Token reads the API token of the node in dir, making it (32 random
// bytes, base64url, mode 0600) when there is none.
func Token(dir string) (string, error) {
	p := filepath.Join(dir, TokenName)
	b, err := os.ReadFile(p)
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("minca/api: token: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := base64.RawURLEncoding.EncodeToString(raw[:])
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return Token(dir) // made meanwhile by another process
	}
	if err != nil {
		return "", fmt.Errorf("minca/api: token: %w", err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", err
	}
	return tok, f.Close()
}

// ServeHTTP checks the bearer token, then serves the request. A request
// without the token, or with another, gets 401 and learns nothing else.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(tok), s.token) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="minca"`)
		writeError(w, http.StatusUnauthorized, &apiError{Code: CodeUnauthorized, Message: "a valid bearer token is required (docs/api.md, Authentication)"})
		return
	}
	s.mux.ServeHTTP(w, r)
}
