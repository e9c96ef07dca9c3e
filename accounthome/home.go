// Package accounthome is a minimal account home (06 §2–§3) for local use
// and tests: it holds an account's root key, serves the connect page at
// /connect on a loopback address, answers programs that connect by code
// (over a relay, as 06 §3 says) and apps that ask over HTTP (06 §2.4–§2.5,
// with the exchange of §2.3 carried by HTTP requests instead of
// postMessage), and keeps the connections it grants, revoking a
// disconnected one's keys where the account writes (§2.10). `minca home`
// runs one. docs/connect.md, "The account home", describes its routes.
package accounthome

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
)

// Limits of a home.
const (
	MaxExchanges = 16               // code exchanges under way at once
	MaxRequests  = 64               // app requests waiting for the person at once
	keepFinished = 10 * time.Minute // how long a finished exchange's page still shows its end
)

// Options are what a home runs with. Node, Account and Relay are
// required; the rest have defaults.
type Options struct {
	// Node is the account's node, holding the account key: it knows where
	// the account writes, and writes the sys.revoke records of
	// disconnecting (06 §2.10) and the spaces an app asks to be made.
	Node *node.Node
	// Account is the account's root key, which signs the notes granted.
	Account *identity.PrivateKey
	// Name is the account's name, for the grant.
	Name string
	// Relay is the relay (ws:// or wss://, …/minca/relay) both sides of a
	// code exchange meet on, and the one named in grants.
	Relay string
	// Days is the home's choice of a grant's lifetime; 0: the request's,
	// else 7 (06 §2.5 step 4).
	Days int
	// Wait is how long a code exchange waits for a program to ask: 0
	// means 2 minutes. Decide is how long an asked exchange or an app's
	// request waits for the person: 0 means 10 minutes.
	Wait, Decide time.Duration
	// Store keeps the connections; nil: a FileStore in the node's
	// directory (home-connections.json).
	Store connect.Store
	// Logger hears what the home does; nil: nothing.
	Logger *slog.Logger
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Server is a running home: an http.Handler. Close ends its exchanges.
type Server struct {
	o     Options
	store connect.Store
	log   *slog.Logger
	mux   *http.ServeMux
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup

	// granting serializes what changes connections (granting,
	// remembering, disconnecting) across the connect.Homes of the
	// origins, which share one store but each have a lock of their own.
	granting sync.Mutex

	mu        sync.Mutex
	homes     map[string]*connect.Home // by origin: each loopback name the page is served at
	exchanges map[string]*exchange     // by id
	byRoom    map[string]string        // code room → exchange id
	requests  map[string]*appRequest   // by id
}

// New makes a home.
func New(o *Options) (*Server, error) {
	if o == nil || o.Node == nil || o.Account == nil || o.Relay == "" {
		return nil, errors.New("minca/accounthome: a home needs its Node, Account and Relay")
	}
	opts := *o
	if opts.Node.Account() != opts.Account.DID() || !opts.Node.HasAccountKey() {
		return nil, fmt.Errorf("minca/accounthome: the node acts for %s with the account key %v, not for the account %s", opts.Node.Account(), opts.Node.HasAccountKey(), opts.Account.DID())
	}
	if u, err := url.Parse(opts.Relay); err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return nil, fmt.Errorf("minca/accounthome: options: Relay %q is not a ws:// or wss:// address", opts.Relay)
	}
	if opts.Days < 0 || opts.Days > 365 {
		return nil, fmt.Errorf("minca/accounthome: options: Days %d is outside 0–365", opts.Days)
	}
	if opts.Wait < 0 || opts.Decide < 0 {
		return nil, errors.New("minca/accounthome: options: Wait and Decide are not negative")
	}
	if opts.Wait == 0 {
		opts.Wait = 2 * time.Minute
	}
	if opts.Decide == 0 {
		opts.Decide = 10 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	store := opts.Store
	if store == nil {
		store = NewFileStore(opts.Node.Dir() + "/home-connections.json")
	}
	if _, err := store.Connections(context.Background()); err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{o: opts, store: &lockedStore{s: store}, log: opts.Logger, ctx: ctx, stop: stop,
		homes: map[string]*connect.Home{}, exchanges: map[string]*exchange{}, byRoom: map[string]string{}, requests: map[string]*appRequest{}}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /connect", s.page)
	m.HandleFunc("POST /connect/code", s.startCode)
	m.HandleFunc("GET /connect/code/{id}", s.codeState)
	m.HandleFunc("POST /connect/code/{id}", s.decideCode)
	m.HandleFunc("POST /connect/request", s.appAsk)
	m.HandleFunc("OPTIONS /connect/request", s.appPreflight)
	m.HandleFunc("GET /connect/request/{id}", s.appAnswer)
	m.HandleFunc("OPTIONS /connect/request/{id}", s.appPreflight)
	m.HandleFunc("POST /connect/request/{id}", s.decideApp)
	m.HandleFunc("GET /connections", s.listConnections)
	m.HandleFunc("POST /connections/disconnect", s.disconnect)
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/connect", http.StatusSeeOther) })
	s.mux = m
}

// ServeHTTP answers requests at the home's loopback names only: a request
// naming another host (a page on another site rebinding a name to this
// address) is refused.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, err := s.originOf(r); err != nil {
		http.Error(w, err.Error(), http.StatusMisdirectedRequest)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin") // "no-referrer" would make a form post's Origin "null"
	s.mux.ServeHTTP(w, r)
}

// Close ends every exchange under way and waits for them.
func (s *Server) Close() error {
	s.stop()
	s.wg.Wait()
	return nil
}

// originOf is the origin the request reached the home at: http:// and a
// loopback name with its port, as the page's address bar shows it.
func (s *Server) originOf(r *http.Request) (string, error) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host != "localhost" && host != "127.0.0.1" && host != "::1" {
		return "", fmt.Errorf("this account home answers at localhost, 127.0.0.1 or [::1] only, not at %q", r.Host)
	}
	return connect.ParseOrigin("http://" + strings.ToLower(r.Host))
}

// home is the connect.Home for an origin the page is served at: a
// program's proof names the origin it was handed to (06 §2.4), and the
// same home answers at each of its loopback names.
func (s *Server) home(origin string) (*connect.Home, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.homes[origin]; h != nil {
		return h, nil
	}
	sess, _, err := s.o.Node.Session()
	if err != nil {
		return nil, err
	}
	h, err := connect.NewHome(connect.HomeOptions{Origin: origin, SessionKey: sess, Store: s.store})
	if err != nil {
		return nil, err
	}
	s.homes[origin] = h
	return h, nil
}

// sameOrigin refuses a state-changing request a page of another origin
// sent: a browser names the page's origin in Origin.
func sameOrigin(r *http.Request, origin string) error {
	if o := r.Header.Get("Origin"); o != "" && o != origin {
		return fmt.Errorf("a request from %s: the home takes decisions from its own page only", o)
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return fmt.Errorf("a %s request: the home takes decisions from its own page only", site)
	}
	return nil
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// lockedStore serializes a store shared by the home's origins.
type lockedStore struct {
	mu sync.Mutex
	s  connect.Store
}

func (l *lockedStore) Connections(ctx context.Context) ([]connect.Connection, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Connections(ctx)
}

func (l *lockedStore) Apply(ctx context.Context, put []connect.Connection, remove []string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Apply(ctx, put, remove)
}
