package transport

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/minca-go/minca/internal/rate"
)

// ServerOptions bound what a [Server] takes on (docs/sync.md, Limits).
// nil means defaults.
type ServerOptions struct {
	// MaxConns is how many connections the server keeps at once, in the
	// handshake or proven; past it, new ones are refused with HTTP 503.
	// Default 1024.
	MaxConns int
	// MaxConnsPerAddr is how many of them may come from one source
	// address (an IPv6 address by its /64), so one machine cannot take
	// every slot. Default 32.
	MaxConnsPerAddr int
	// MaxHandshakes is how many connections may be in hello or who at
	// once. When all are taken, the oldest handshake under way is ended
	// (who/timeout) to make room: a proven peer finishes in milliseconds,
	// a silent one holds its slot until it is the oldest. Default 64.
	MaxHandshakes int
	// MaxHandshakesPerAddr is how many handshakes one source address may
	// have under way; past it, new ones from it are refused with HTTP 503.
	// Default 8.
	MaxHandshakesPerAddr int
	// ConnRatePerAddr is how many new connections a second one source
	// address may open, beyond a burst of ConnBurstPerAddr: each costs the
	// server an upgrade and the checks of who, whatever key it shows, so
	// throwaway keys from one machine are bounded by its address. Past
	// it a new one is refused with HTTP 429 before the upgrade. Defaults
	// 8 a second, a burst of 64.
	ConnRatePerAddr  float64
	ConnBurstPerAddr int
	// Origins are the web origins ("https://app.example") whose pages may
	// open a connection from a browser; "*" allows any. A request with an
	// Origin header not listed is refused with HTTP 403 before the
	// upgrade, so a web page (DNS rebinding included) cannot make a
	// browser a peer. Programs send no Origin. Default: none.
	Origins []string
	// Refuse, when set, is asked for each request's source address
	// ([AddrOf]) before anything else; a non-empty answer refuses it with
	// HTTP 403 and that text. The sync layer refuses addresses that sent
	// forgeries here.
	Refuse func(addr string) string
	// Logger receives refusals at debug level. nil: none.
	Logger *slog.Logger
}

// Server accepts peers' WebSocket connections (at [PathPeer] when mounted
// there by the caller), proves each with who and hands it to its handler.
// It is an http.Handler, so `minca serve` mounts it beside its relay.
type Server struct {
	o      *resolved
	so     ServerOptions
	handle func(context.Context, *Conn)
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex // orders wg.Add before Close's wg.Wait; guards held and the counts
	closed    bool
	held      map[*Conn]struct{} // proven connections, for Close to end first
	conns     int
	perAddr   map[string]int
	pending   *list.List // of *handshaking, oldest first
	hsPerAddr map[string]int
	wg        sync.WaitGroup
	newConns  *rate.Buckets // by source address
}

// handshaking is a connection in hello or who.
type handshaking struct {
	addr   string
	cancel context.CancelCauseFunc
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
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxConns", &so.MaxConns, 1024}, {"MaxConnsPerAddr", &so.MaxConnsPerAddr, 32},
		{"MaxHandshakes", &so.MaxHandshakes, 64}, {"MaxHandshakesPerAddr", &so.MaxHandshakesPerAddr, 8},
		{"ConnBurstPerAddr", &so.ConnBurstPerAddr, 64},
	} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 {
			return nil, fmt.Errorf("minca/transport: server options: %s %d is negative", f.name, *f.v)
		}
	}
	if so.ConnRatePerAddr == 0 {
		so.ConnRatePerAddr = 8
	}
	if !(so.ConnRatePerAddr > 0) {
		return nil, fmt.Errorf("minca/transport: server options: ConnRatePerAddr %v is not a positive rate", so.ConnRatePerAddr)
	}
	for _, or := range so.Origins {
		if or != "*" && !validOrigin(or) {
			return nil, fmt.Errorf("minca/transport: server options: origin %q is not scheme://host[:port]", or)
		}
	}
	if so.Logger == nil {
		so.Logger = slog.New(slog.DiscardHandler)
	}
	if handle == nil {
		return nil, errors.New("minca/transport: NewServer: a handler is required")
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		o: o, so: so, handle: handle, log: so.Logger, ctx: ctx, cancel: cancel,
		perAddr: map[string]int{}, pending: list.New(), hsPerAddr: map[string]int{}, held: map[*Conn]struct{}{},
		newConns: rate.New(so.ConnRatePerAddr, so.ConnBurstPerAddr),
	}, nil
}

// validOrigin reports whether o is a serialized web origin.
func validOrigin(o string) bool {
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Path == "" && u.RawQuery == "" && u.User == nil
}

// originAllowed reports whether a request's Origin header (a browser's)
// is one listed; a request with none is a program's, and allowed.
func originAllowed(origin string, allowed []string) bool {
	if origin == "" {
		return true
	}
	return slices.ContainsFunc(allowed, func(a string) bool { return a == "*" || strings.EqualFold(a, origin) })
}

// AddrOf is the source address a connection is counted under: the IP of
// a "host:port" remote address, an IPv6 one by its /64 (one machine's
// share); "" when there is none to read.
func AddrOf(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip4 := ip.To4(); ip4 != nil {
		return ip4.String()
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}

// errEvicted is why a handshake made room for a newer one.
var errEvicted = errorf(CodeWhoTimeout, "hello and who were not done while newer connections waited: the server's handshake slots are full")

// ServeHTTP upgrades the request to a WebSocket, runs who as the
// responder and serves the connection until the handler returns.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	addr := AddrOf(r.RemoteAddr)
	if s.so.Refuse != nil {
		if why := s.so.Refuse(addr); why != "" {
			s.log.Debug("refused a peer", "remote", r.RemoteAddr, "reason", why)
			http.Error(w, why, http.StatusForbidden)
			return
		}
	}
	if origin := r.Header.Get("Origin"); !originAllowed(origin, s.so.Origins) {
		s.log.Debug("refused a browser's connection", "remote", r.RemoteAddr, "origin", origin)
		http.Error(w, "connections from web pages of this origin are not accepted here", http.StatusForbidden)
		return
	}
	if addr != "" && !s.newConns.Take(time.Now(), addr) {
		s.log.Debug("refused a peer", "remote", r.RemoteAddr, "reason", "new connections too often")
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(1/s.so.ConnRatePerAddr))))
		http.Error(w, "too many new connections from this address; try again later", http.StatusTooManyRequests)
		return
	}
	hctx, cancel := context.WithCancelCause(s.ctx)
	defer cancel(nil)
	hs, refusal := s.enter(addr, cancel)
	if refusal != "" {
		s.log.Debug("refused a peer", "remote", r.RemoteAddr, "reason", refusal)
		http.Error(w, refusal, http.StatusServiceUnavailable)
		return
	}
	defer s.wg.Done()
	defer s.leave(addr)
	released := false
	release := func() {
		if !released {
			released = true
			s.handshakeDone(hs)
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
	// The Origin was checked above, against our own list.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept wrote the response
	}
	c, err := handshake(hctx, newWSLink(ws, s.o.MaxFrame), s.o, HandshakeOptions{Role: Responder, Binding: binding})
	release()
	if err != nil {
		s.log.Debug("refused a peer", "remote", r.RemoteAddr, "reason", Code(err), "err", err)
		return
	}
	c.addr = addr
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

// enter takes a connection slot and a handshake slot for addr, ending the
// oldest handshake under way when every handshake slot is taken; a
// non-empty refusal says why there is no room.
func (s *Server) enter(addr string, cancel context.CancelCauseFunc) (*handshaking, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, "closing"
	case s.conns >= s.so.MaxConns:
		return nil, "too many connections"
	case s.perAddr[addr] >= s.so.MaxConnsPerAddr:
		return nil, "too many connections from this address"
	case s.hsPerAddr[addr] >= s.so.MaxHandshakesPerAddr:
		return nil, "too many handshakes under way from this address"
	}
	if s.pending.Len() >= s.so.MaxHandshakes {
		if s.so.MaxHandshakes == 0 {
			return nil, "no handshakes taken"
		}
		oldest := s.pending.Remove(s.pending.Front()).(*handshaking)
		s.hsPerAddr[oldest.addr]--
		oldest.cancel(errEvicted)
	}
	s.wg.Add(1)
	s.conns++
	s.perAddr[addr]++
	s.hsPerAddr[addr]++
	hs := &handshaking{addr: addr, cancel: cancel}
	s.pending.PushBack(hs)
	return hs, ""
}

// handshakeDone gives back hs's handshake slot, unless it was taken away.
func (s *Server) handshakeDone(hs *handshaking) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for e := s.pending.Front(); e != nil; e = e.Next() {
		if e.Value == hs {
			s.pending.Remove(e)
			s.hsPerAddr[hs.addr]--
			if s.hsPerAddr[hs.addr] == 0 {
				delete(s.hsPerAddr, hs.addr)
			}
			return
		}
	}
}

func (s *Server) leave(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns--
	if s.perAddr[addr]--; s.perAddr[addr] == 0 {
		delete(s.perAddr, addr)
	}
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
