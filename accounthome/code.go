package accounthome

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/connect/relayroom"
)

// Where a code exchange stands, as the page shows it.
const (
	stateWaiting  = "waiting"  // in the room; no program has asked yet
	stateAsked    = "asked"    // a program asked: the person decides
	stateAnswered = "answered" // the grant went; the program waits for the person's check
	stateDone     = "done"     // the program kept its note
	stateDenied   = "denied"   // the person said no
	stateNobody   = "nobody"   // nobody waits on the link any more
	stateFailed   = "failed"   // the exchange ended otherwise
)

// exchange is one connecting by code, from the home's side (06 §3).
type exchange struct {
	id, origin string
	decide     chan bool // the person's answer: allow or not

	mu       sync.Mutex
	state    string
	ask      connect.Ask
	audience string // the key granted, once answered
	problem  string
	ended    time.Time
}

// codeView is what the page and GET /connect/code/{id} show of an
// exchange.
type codeView struct {
	ID       string `json:"id"`
	State    string `json:"state"`
	Name     string `json:"name,omitempty"`
	Check    string `json:"check,omitempty"`
	Audience string `json:"audience,omitempty"`
	Problem  string `json:"problem,omitempty"`
}

func (e *exchange) view() codeView {
	e.mu.Lock()
	defer e.mu.Unlock()
	v := codeView{ID: e.id, State: e.state, Problem: e.problem, Audience: e.audience}
	if e.state != stateWaiting {
		v.Name, v.Check = e.ask.Name, e.ask.Check
	}
	return v
}

func (e *exchange) set(state, problem string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.state, e.problem = state, problem
	if state != stateWaiting && state != stateAsked && state != stateAnswered {
		e.ended = time.Now()
	}
}

// startCode takes the code the page read from its address (POST
// /connect/code, form member code) and joins its room: the home side of
// one exchange. The same code again finds the exchange it started.
func (s *Server) startCode(w http.ResponseWriter, r *http.Request) {
	origin, _ := s.originOf(r)
	if err := sameOrigin(r, origin); err != nil {
		httpError(w, http.StatusForbidden, "home/origin", err.Error())
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	code, err := connect.CodeIn(r.FormValue("code"))
	if err != nil {
		httpError(w, http.StatusBadRequest, "code/none", "no connect code (mc_ and 22 characters) in the page's address: open the link the program shows")
		return
	}
	s.mu.Lock()
	s.prune()
	if id, ok := s.byRoom[code.Room()]; ok {
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]string{"id": id})
		return
	}
	live := 0
	for _, e := range s.exchanges {
		if st := e.view().State; st == stateWaiting || st == stateAsked || st == stateAnswered {
			live++
		}
	}
	if live >= MaxExchanges {
		s.mu.Unlock()
		httpError(w, http.StatusServiceUnavailable, "home/busy", fmt.Sprintf("%d programs are connecting already; try again in a minute", live))
		return
	}
	e := &exchange{id: newID(), origin: origin, decide: make(chan bool, 1), state: stateWaiting}
	s.exchanges[e.id] = e
	s.byRoom[code.Room()] = e.id
	s.wg.Add(1)
	s.mu.Unlock()
	go s.runCode(e, code)
	writeJSON(w, http.StatusOK, map[string]string{"id": e.id})
}

// prune forgets exchanges and requests that ended a while ago. Under s.mu.
func (s *Server) prune() {
	for id, e := range s.exchanges {
		e.mu.Lock()
		old := !e.ended.IsZero() && time.Since(e.ended) > keepFinished
		e.mu.Unlock()
		if old {
			delete(s.exchanges, id)
			for room, eid := range s.byRoom {
				if eid == id {
					delete(s.byRoom, room)
				}
			}
		}
	}
	for id, a := range s.requests {
		if a.finishedLongAgo() {
			delete(s.requests, id)
		}
	}
}

// runCode runs the home's side over the relay until the program is done,
// the person says no, or nobody asks.
func (s *Server) runCode(e *exchange, code connect.Code) {
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(s.ctx, s.o.Wait+s.o.Decide+2*time.Minute)
	defer cancel()
	room, err := relayroom.Join(ctx, s.o.Relay, code.Room(), &relayroom.Options{Logger: s.log})
	if err != nil {
		s.log.Warn("the relay", "relay", s.o.Relay, "err", err)
		e.set(stateFailed, "the home cannot reach its relay: "+err.Error())
		return
	}
	defer room.Close()
	h, err := connect.NewHomeExchange(code, e.origin)
	if err != nil {
		e.set(stateFailed, err.Error())
		return
	}
	home, err := s.home(e.origin)
	if err != nil {
		e.set(stateFailed, err.Error())
		return
	}
	decide := func(ctx context.Context, ask connect.Ask) (connect.Decision, error) {
		e.mu.Lock()
		e.state, e.ask, e.audience = stateAsked, ask, ask.DID
		e.mu.Unlock()
		s.log.Info("a program asks", "name", ask.Name, "key", ask.DID)
		t := time.NewTimer(s.o.Decide)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return connect.Decision{}, ctx.Err()
		case <-t.C:
			return connect.Decision{Denied: "nobody answered at the home in time"}, nil
		case allow := <-e.decide:
			if !allow {
				return connect.Decision{Denied: "the person said no"}, nil
			}
		}
		s.granting.Lock()
		g, err := home.GrantCode(ctx, ask, connect.GrantOptions{Account: s.o.Account, Name: s.o.Name, Days: s.o.Days,
			Relays: []string{s.o.Relay}, Now: s.o.Now()})
		s.granting.Unlock()
		if err != nil {
			var ref *connect.Refusal
			if errors.As(err, &ref) {
				e.set(stateAsked, "refused: "+ref.Error())
				return connect.Decision{Denied: ref.Message}, nil
			}
			return connect.Decision{}, err
		}
		e.mu.Lock()
		e.state, e.audience = stateAnswered, ask.DID
		e.mu.Unlock()
		s.log.Info("granted", "name", ask.Name, "key", ask.DID, "expiresAt", g.ExpiresAt)
		return connect.Decision{Grant: g}, nil
	}
	err = connect.RunHome(ctx, room, h, decide, &connect.RunOptions{Wait: s.o.Wait, Dropped: func(peer string, err error) {
		s.log.Debug("ignored", "peer", peer, "err", err)
	}})
	var ref *connect.Refusal
	switch {
	case err == nil && h.State() == connect.HomeDone:
		e.set(stateDone, "")
	case err == nil && h.State() == connect.HomeDenied:
		e.mu.Lock()
		problem := e.problem
		e.mu.Unlock()
		e.set(stateDenied, problem)
	case errors.As(err, &ref) && ref.Code == connect.CodeCodeNobody:
		e.set(stateNobody, "nobody waits on this link any more: start again from the program")
	case err != nil && h.State() == connect.HomeAnswered:
		e.set(stateFailed, "the program did not say it kept its note; it may have been given another check")
	default:
		e.set(stateFailed, fmt.Sprint(err))
	}
}

func (s *Server) exchange(id string) *exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exchanges[id]
}

// codeState is an exchange's state as JSON, for the page to follow.
func (s *Server) codeState(w http.ResponseWriter, r *http.Request) {
	e := s.exchange(r.PathValue("id"))
	if e == nil {
		httpError(w, http.StatusNotFound, "home/no-exchange", "no such exchange at this home")
		return
	}
	writeJSON(w, http.StatusOK, e.view())
}

// decideCode takes the person's Allow or Deny (a form POST from the page,
// member decision) and shows the page again.
func (s *Server) decideCode(w http.ResponseWriter, r *http.Request) {
	origin, _ := s.originOf(r)
	if err := sameOrigin(r, origin); err != nil {
		httpError(w, http.StatusForbidden, "home/origin", err.Error())
		return
	}
	e := s.exchange(r.PathValue("id"))
	if e == nil {
		httpError(w, http.StatusNotFound, "home/no-exchange", "no such exchange at this home")
		return
	}
	if e.view().State != stateAsked {
		httpError(w, http.StatusConflict, "home/decided", "this program is not waiting for a decision")
		return
	}
	if !takeDecision(w, r, e.decide) {
		return
	}
	// The page shows the outcome once the answer went.
	for i := 0; i < 100 && e.view().State == stateAsked; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, e.view())
		return
	}
	http.Redirect(w, r, "/connect?code="+e.id, http.StatusSeeOther)
}

// takeDecision reads the person's decision (form member decision, allow
// or deny) and hands it over on to, once; it answers the request itself
// and returns false when it cannot.
func takeDecision(w http.ResponseWriter, r *http.Request, to chan<- bool) bool {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	d := r.FormValue("decision")
	if d != "allow" && d != "deny" {
		httpError(w, http.StatusBadRequest, "home/decision", "decision is allow or deny")
		return false
	}
	select {
	case to <- d == "allow":
		return true
	default:
		httpError(w, http.StatusConflict, "home/decided", "a decision was already given")
		return false
	}
}

func wantsJSON(r *http.Request) bool {
	return r.Header.Get("Accept") == "application/json"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// httpError answers with {"code","message"}.
func httpError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"code": code, "message": msg})
}
