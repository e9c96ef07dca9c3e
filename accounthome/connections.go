package accounthome

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"

	"github.com/minca-go/minca/connect"
)

// connectionView is one connection as GET /connections lists it.
type connectionView struct {
	ID          string   `json:"id"`
	Kind        string   `json:"kind"`
	Origin      string   `json:"origin,omitempty"`
	Audience    string   `json:"audience"`
	Name        string   `json:"name,omitempty"`
	Access      string   `json:"access"`
	Scope       string   `json:"scope,omitempty"`
	Spaces      []string `json:"spaces"`
	RecordsOnly bool     `json:"recordsOnly"`
	ExpiresAt   int64    `json:"expiresAt"`
	Replaced    []string `json:"replaced"`
}

func viewOf(c connect.Connection) connectionView {
	v := connectionView{ID: c.ID(), Kind: c.Kind.String(), Origin: c.Origin, Audience: c.Audience, Name: c.Name,
		Access: c.Access, Scope: c.Scope, Spaces: slices.Clone(c.Spaces), RecordsOnly: c.RecordsOnly, ExpiresAt: c.ExpiresAt, Replaced: []string{}}
	if v.Spaces == nil {
		v.Spaces = []string{}
	}
	for _, r := range c.Replaced {
		v.Replaced = append(v.Replaced, r.Key)
	}
	return v
}

// listConnections lists the connections kept (06 §2.10): a page, or JSON
// ({"connections": [...]}) when asked for with Accept: application/json.
func (s *Server) listConnections(w http.ResponseWriter, r *http.Request) {
	conns, err := s.store.Connections(r.Context())
	if err != nil {
		httpError(w, http.StatusInternalServerError, "home/store", err.Error())
		return
	}
	views := []connectionView{}
	for _, c := range conns {
		views = append(views, viewOf(c))
	}
	slices.SortFunc(views, func(a, b connectionView) int { return strings.Compare(a.ID, b.ID) })
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"connections": views})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	if err := connectionsTemplate.Execute(w, views); err != nil {
		s.log.Warn("the connections page", "err", err)
	}
}

// Revoked is a key disconnecting revoked, and the spaces its sys.revoke
// was written in.
type Revoked struct {
	Key    string   `json:"key"`
	Spaces []string `json:"spaces"`
}

// disconnect removes a connection (form or query member id, as listed)
// and revokes its keys where 06 §2.10 says: JSON {"disconnected",
// "revoked"} when asked for with Accept: application/json, else back to
// the list.
func (s *Server) disconnect(w http.ResponseWriter, r *http.Request) {
	if err := sameOrigin(r, s.ownOrigin(r)); err != nil {
		httpError(w, http.StatusForbidden, "home/origin", err.Error())
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	id := r.FormValue("id")
	revoked, err := s.Disconnect(r.Context(), id)
	switch {
	case errors.Is(err, connect.ErrNotConnected):
		httpError(w, http.StatusNotFound, "home/not-connected", err.Error())
		return
	case err != nil:
		httpError(w, http.StatusInternalServerError, "home/revoke", err.Error())
		return
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"disconnected": id, "revoked": revoked})
		return
	}
	http.Redirect(w, r, "/connections", http.StatusSeeOther)
}

// Disconnect removes the connection with id (as GET /connections lists
// it: app:<origin>, code:<key>, carrier:<key>) and writes a sys.revoke of
// each key it held that could write, in each space where the account
// writes that the key's reach covers (06 §2.10: an app of scope account
// in its carry spaces too), keeping what the home had seen of the key; a
// carrier is removed from the node (06 §4.2).
func (s *Server) Disconnect(ctx context.Context, id string) ([]Revoked, error) {
	home, err := s.anyHome()
	if err != nil {
		return nil, err
	}
	var d connect.Disconnected
	s.granting.Lock()
	defer s.granting.Unlock()
	switch kind, rest, _ := strings.Cut(id, ":"); kind {
	case "app":
		d, err = home.DisconnectApp(ctx, rest)
	case "code", "carrier":
		// One key is never both (06 §2.10): the id asked for names the
		// kind, and a key connected as the other kind is not it.
		if err := connectedAs(ctx, home, id, rest); err != nil {
			return nil, err
		}
		d, err = home.DisconnectKey(ctx, rest)
	default:
		return nil, fmt.Errorf("%w: %q is not a connection's id (app:ORIGIN, code:KEY, carrier:KEY)", connect.ErrNotConnected, id)
	}
	if errors.Is(err, connect.ErrNotConnected) {
		return nil, fmt.Errorf("%w: %s", connect.ErrNotConnected, id)
	}
	if err != nil {
		return nil, err
	}
	if d.Connection.Kind == connect.KindCarrier {
		// A carrier holds no note: disconnecting it removes it (06 §4.2).
		if err := s.removeCarriers(ctx, []connect.Connection{d.Connection}); err != nil {
			return nil, err
		}
	}
	writes, err := s.accountWrites(ctx)
	if err != nil {
		return nil, err
	}
	out := []Revoked{}
	for _, reach := range d.Revoke {
		rv := Revoked{Key: reach.Key, Spaces: []string{}}
		for _, sp := range reach.Where(writes) {
			if err := s.revoke(ctx, sp, reach.Key); err != nil {
				return out, fmt.Errorf("revoking %s in %s: %w", reach.Key, sp, err)
			}
			rv.Spaces = append(rv.Spaces, sp)
		}
		out = append(out, rv)
	}
	s.log.Info("disconnected", "id", id, "revoked", len(out))
	return out, nil
}

// connectedAs checks that the home holds the connection id, of the key
// key; when the key is connected as the other kind, the error names that.
func connectedAs(ctx context.Context, home *connect.Home, id, key string) error {
	conns, err := home.Connections(ctx)
	if err != nil {
		return err
	}
	for _, c := range conns {
		if c.Audience != key || c.Kind == connect.KindApp {
			continue
		}
		if c.ID() == id {
			return nil
		}
		return fmt.Errorf("%w: %s; the key is connected as %s", connect.ErrNotConnected, id, c.ID())
	}
	return fmt.Errorf("%w: %s", connect.ErrNotConnected, id)
}

// anyHome is a connect.Home for disconnecting, which does not depend on
// the origin the page is served at.
func (s *Server) anyHome() (*connect.Home, error) {
	s.mu.Lock()
	for _, h := range s.homes {
		s.mu.Unlock()
		return h, nil
	}
	s.mu.Unlock()
	return s.home("http://localhost")
}

// accountWrites is everywhere the account writes, as far as its node
// knows: the spaces it lists, its carry spaces and its registry.
func (s *Server) accountWrites(ctx context.Context) (connect.AccountWrites, error) {
	sps, err := s.o.Node.Spaces(ctx)
	if err != nil {
		return connect.AccountWrites{}, err
	}
	carry, err := s.o.Node.CarrySpaceIDs(ctx)
	if err != nil {
		return connect.AccountWrites{}, err
	}
	w := connect.AccountWrites{Registry: s.o.Node.Registry(), Carry: carry}
	for _, sp := range sps {
		if !sp.Registry {
			w.Listed = append(w.Listed, sp.ID)
		}
	}
	return w, nil
}

// revoke writes sys.revoke of key in space, keeping, per collection, what
// the key wrote up to the last log place the home holds (03 §6.4).
func (s *Server) revoke(ctx context.Context, space, key string) error {
	cutoffs := map[string]int64{}
	for r, err := range s.o.Node.Export(ctx, space) {
		if err != nil {
			return err
		}
		v := r.Version
		if v.Author != key || v.Log == nil {
			continue
		}
		if p, ok := cutoffs[v.Collection]; !ok || v.Log.N > p {
			cutoffs[v.Collection] = v.Log.N
		}
	}
	_, err := s.o.Node.Revoke(ctx, space, key, s.o.Account.DID(), cutoffs)
	return err
}

var connectionsTemplate = template.Must(template.New("connections").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Minca · Connections</title>
<style>
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; color: #1d2330; background: #f4f6f9; }
  main { max-width: 40rem; margin: 3rem auto; padding: 2rem; background: #fff; border: 1px solid #dfe3ea; border-radius: 14px; }
  h1 { font-size: 1.35rem; margin: 0 0 1rem; }
  li { display: flex; justify-content: space-between; align-items: center; gap: 1rem; padding: .7rem 0; border-bottom: 1px solid #dfe3ea; }
  ul { list-style: none; padding: 0; }
  .muted { color: #5d6677; font-size: .85rem; word-break: break-all; }
  button { font: inherit; padding: .4rem .8rem; border-radius: 8px; border: 1px solid #dfe3ea; background: #fff; cursor: pointer; }
</style></head><body><main>
<h1>Connections</h1>
{{if not .}}<p class="muted">Nothing is connected to this account.</p>{{end}}
<ul>{{range .}}
<li><div><strong>{{if .Name}}{{.Name}}{{else if .Origin}}{{.Origin}}{{else}}a program{{end}}</strong>
<div class="muted">{{.Kind}} · {{.Access}}{{if .RecordsOnly}} records only{{end}}{{if .Scope}} · {{.Scope}}{{end}} · {{.Audience}}</div></div>
<form method="post" action="/connections/disconnect"><input type="hidden" name="id" value="{{.ID}}"><button type="submit">Disconnect</button></form></li>
{{end}}</ul>
<p><a href="/connect">Back</a></p>
</main></body></html>
`))
