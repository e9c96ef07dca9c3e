package accounthome

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/node"
)

// maxRequestBytes bounds an app's request body.
const maxRequestBytes = 64 << 10

// appRequest is an app's ConnectRequest waiting for the person (06 §2.3,
// over HTTP): the app's origin is what its browser put in Origin, never a
// name the request gives.
type appRequest struct {
	id, origin string
	req        *connect.ConnectRequest
	decide     chan bool

	mu      sync.Mutex
	state   string            // waiting, granted, denied
	answer  *canonical.Object // the grant, or a carrier's carry grant
	problem string
	ended   time.Time
}

// requestView is what the page shows of an app's request.
type requestView struct {
	ID, Origin, Name, Access, Scope, State, Problem string
	RecordsOnly                                     bool
	Create                                          []string
	Days                                            int
}

func (a *appRequest) view() requestView {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := requestView{ID: a.id, Origin: a.origin, Name: a.req.Name, Access: a.req.Access, Scope: a.req.Scope,
		State: a.state, Problem: a.problem, RecordsOnly: a.req.RecordsOnly, Days: a.req.Days}
	if v.Scope == "" {
		v.Scope = connect.ScopeSpaces
	}
	if v.Days == 0 {
		v.Days = connect.DefaultDays
	}
	for _, c := range a.req.Create {
		v.Create = append(v.Create, c.Name)
	}
	return v
}

func (a *appRequest) finish(state string, answer *canonical.Object, problem string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.state, a.answer, a.problem, a.ended = state, answer, problem, time.Now()
}

func (a *appRequest) finishedLongAgo() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.ended.IsZero() && time.Since(a.ended) > keepFinished
}

func (s *Server) request(id string) *appRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[id]
}

// cors lets the app's page read the answer: only the origin that asked.
func cors(w http.ResponseWriter, origin string) {
	w.Header().Set("Access-Control-Allow-Origin", origin)
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
	w.Header().Set("Access-Control-Allow-Methods", "GET, POST")
	w.Header().Add("Vary", "Origin")
}

func (s *Server) appPreflight(w http.ResponseWriter, r *http.Request) {
	if o, err := connect.ParseOrigin(r.Header.Get("Origin")); err == nil {
		cors(w, o)
	}
	w.WriteHeader(http.StatusNoContent)
}

// denied answers {"denied": reason}, as minca:denied does (06 §2.3).
func denied(w http.ResponseWriter, status int, reason string) {
	writeJSON(w, status, map[string]string{"denied": reason})
}

// appAsk takes an app's request (POST /connect/request, {"request":
// ConnectRequest}) from its page: it is checked as 06 §2.4–§2.5 say, and
// waits for the person at /connect?request=ID. The answer is 202 {id,
// page}, or 400/403 {denied} for a request the home refuses at once.
func (s *Server) appAsk(w http.ResponseWriter, r *http.Request) {
	origin, err := connect.ParseOrigin(r.Header.Get("Origin"))
	if err != nil {
		denied(w, http.StatusBadRequest, "an app asks from a page: its browser names its origin in Origin (06 §2.3 step 3)")
		return
	}
	cors(w, origin)
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		denied(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the home did not understand: a request is at most %d bytes", maxRequestBytes))
		return
	}
	v, err := canonical.Parse(data)
	o, isObj := v.(*canonical.Object)
	inner, has := any(nil), false
	if isObj {
		inner, has = o.Get("request")
	}
	if err != nil || !isObj || !has || o.Len() != 1 {
		denied(w, http.StatusBadRequest, "the home did not understand: the body is {\"request\": ConnectRequest} (06 §2.3)")
		return
	}
	raw, _ := canonical.Marshal(inner)
	req, prop, err := connect.ParseHomeRequest(raw, origin)
	if err != nil {
		denied(w, http.StatusBadRequest, "the home did not understand: "+err.Error())
		return
	}
	if prop != nil {
		denied(w, http.StatusForbidden, "this home keeps no automations: a proposal is not taken here")
		return
	}
	for _, c := range req.Create {
		if c.Visibility != "public" {
			denied(w, http.StatusForbidden, fmt.Sprintf("this home makes public spaces only; %q is %s", c.Name, c.Visibility))
			return
		}
	}
	home, err := s.home(s.ownOrigin(r))
	if err != nil {
		denied(w, http.StatusInternalServerError, err.Error())
		return
	}
	if err := home.Check(r.Context(), req, origin); err != nil {
		denied(w, http.StatusForbidden, err.Error())
		return
	}
	s.mu.Lock()
	s.prune()
	waiting := 0
	for _, a := range s.requests {
		if a.view().State == "waiting" {
			waiting++
		}
	}
	if waiting >= MaxRequests {
		s.mu.Unlock()
		denied(w, http.StatusServiceUnavailable, "too many requests wait for the person; try again later")
		return
	}
	a := &appRequest{id: newID(), origin: origin, req: req, decide: make(chan bool, 1), state: "waiting"}
	s.requests[a.id] = a
	s.wg.Add(1)
	s.mu.Unlock()
	go s.runApp(a, home)
	writeJSON(w, http.StatusAccepted, map[string]string{"id": a.id, "page": s.ownOrigin(r) + "/connect?request=" + a.id})
}

// ownOrigin is the origin the request reached the home at; ServeHTTP has
// checked it.
func (s *Server) ownOrigin(r *http.Request) string {
	o, _ := s.originOf(r)
	return o
}

// runApp waits for the person, then grants (06 §2.5): it makes the spaces
// asked for, a view-only invite to each, signs the note and remembers the
// connection.
func (s *Server) runApp(a *appRequest, home *connect.Home) {
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(s.ctx, s.o.Decide)
	defer cancel()
	var allow bool
	select {
	case <-ctx.Done():
		a.finish("denied", nil, "nobody answered at the home in time")
		return
	case allow = <-a.decide:
	}
	if !allow {
		a.finish("denied", nil, "the person said no")
		return
	}
	if a.req.Access == connect.AccessCarry {
		g, err := s.grantCarry(ctx, a, home)
		if err != nil {
			s.log.Warn("granting a carrier", "origin", a.origin, "err", err)
			a.finish("denied", nil, err.Error())
			return
		}
		s.log.Info("carrier added", "origin", a.origin, "key", a.req.Audience, "carry", g.Space)
		a.finish("granted", g.Value(), "")
		return
	}
	g, err := s.grantApp(ctx, a, home)
	if err != nil {
		s.log.Warn("granting an app", "origin", a.origin, "err", err)
		a.finish("denied", nil, err.Error())
		return
	}
	s.log.Info("granted", "origin", a.origin, "key", a.req.Audience, "expiresAt", g.ExpiresAt)
	a.finish("granted", g.Value(), "")
}

// grantCarry answers a carrier's request (06 §4.3): the node adds the
// carrier (§4.2: its carry space, passes, keepers), the home remembers it,
// and an earlier carrier from the same origin with another key is removed
// from the node too (§4.3: one carrier an origin). The answer is a carry
// grant: the carry space and its view-only invite, the home's relay, and
// no pod (this home keeps the account's stores in its node).
func (s *Server) grantCarry(ctx context.Context, a *appRequest, home *connect.Home) (*connect.CarryGrant, error) {
	s.granting.Lock()
	defer s.granting.Unlock()
	if err := home.Check(ctx, a.req, a.origin); err != nil {
		return nil, err
	}
	added, err := s.o.Node.AddCarrier(ctx, a.req.Audience, a.req.Name)
	if err != nil {
		return nil, fmt.Errorf("adding the carrier: %w", err)
	}
	rem, err := home.Remember(ctx, a.req, a.origin, connect.Granted{})
	if err != nil {
		return nil, err
	}
	if err := s.removeCarriers(ctx, rem.RemovedCarriers); err != nil {
		return nil, err
	}
	return &connect.CarryGrant{DID: s.o.Account.DID(), Name: s.o.Name, Space: added.Space, Invite: added.Invite,
		Relays: []string{s.o.Relay}}, nil
}

// removeCarriers removes carriers the home no longer keeps from the node
// (06 §4.2): passes deleted, carry:closed, the record marked removed. One
// the node does not use (already removed) is no error.
func (s *Server) removeCarriers(ctx context.Context, cs []connect.Connection) error {
	for _, c := range cs {
		if err := s.o.Node.RemoveCarrier(ctx, c.Audience); err != nil && !isNotFound(err) {
			return fmt.Errorf("removing the carrier %s: %w", c.Audience, err)
		}
	}
	return nil
}

func (s *Server) grantApp(ctx context.Context, a *appRequest, home *connect.Home) (*connect.Grant, error) {
	s.granting.Lock()
	defer s.granting.Unlock()
	if err := home.Check(ctx, a.req, a.origin); err != nil {
		return nil, err
	}
	var spaces []connect.GrantSpace
	for _, c := range a.req.Create {
		gen, err := s.o.Node.CreateSpace(ctx, c.Name, nil)
		if err != nil {
			return nil, fmt.Errorf("making the space %q: %w", c.Name, err)
		}
		inv, err := s.o.Node.Invite(ctx, gen.ID, nil)
		if err != nil {
			return nil, fmt.Errorf("inviting to the space %q: %w", c.Name, err)
		}
		spaces = append(spaces, connect.GrantSpace{ID: gen.ID, Name: c.Name, Invite: inv})
	}
	g, err := connect.IssueGrant(a.req, connect.GrantOptions{Account: s.o.Account, Name: s.o.Name, Spaces: spaces,
		Relays: []string{s.o.Relay}, Days: s.o.Days, Now: s.o.Now()})
	if err != nil {
		return nil, err
	}
	if _, err := home.Remember(ctx, a.req, a.origin, connect.GrantedBy(g)); err != nil {
		return nil, err
	}
	return g, nil
}

// appAnswer is the answer to an app's request, for the page that asked:
// {"state": "waiting"}, {"grant": Grant} or {"denied": reason}.
func (s *Server) appAnswer(w http.ResponseWriter, r *http.Request) {
	a := s.request(r.PathValue("id"))
	if a == nil || r.Header.Get("Origin") != a.origin {
		httpError(w, http.StatusNotFound, "home/no-request", "no such request from this origin")
		return
	}
	cors(w, a.origin)
	a.mu.Lock()
	state, answer, problem := a.state, a.answer, a.problem
	a.mu.Unlock()
	switch state {
	case "granted":
		b, err := canonical.Marshal(answer)
		if err != nil {
			httpError(w, http.StatusInternalServerError, "home/grant", err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, "{\"grant\":%s}\n", b)
	case "denied":
		denied(w, http.StatusOK, problem)
	default:
		writeJSON(w, http.StatusOK, map[string]string{"state": state})
	}
}

// decideApp takes the person's Allow or Deny for an app's request (a form
// POST from the page).
func (s *Server) decideApp(w http.ResponseWriter, r *http.Request) {
	if err := sameOrigin(r, s.ownOrigin(r)); err != nil {
		httpError(w, http.StatusForbidden, "home/origin", err.Error())
		return
	}
	a := s.request(r.PathValue("id"))
	if a == nil {
		httpError(w, http.StatusNotFound, "home/no-request", "no such request at this home")
		return
	}
	if !takeDecision(w, r, a.decide) {
		return
	}
	for i := 0; i < 250 && a.view().State == "waiting"; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, a.view())
		return
	}
	http.Redirect(w, r, "/connect?request="+a.id, http.StatusSeeOther)
}

// isNotFound reports a node's write/not-found: nothing to remove.
func isNotFound(err error) bool {
	var we *node.WriteError
	return errors.As(err, &we) && we.Code == node.CodeNotFound
}
