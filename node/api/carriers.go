package api

import (
	"encoding/json"
	"net/http"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
)

// carrierJSON is a sys.carrier record as the API shows it (06 §4.2).
type carrierJSON struct {
	DID     string `json:"did"`
	Name    string `json:"name"`
	Since   string `json:"since"`
	Gen     int64  `json:"gen"`
	Space   string `json:"space"`
	Removed string `json:"removed,omitempty"`
}

// listCarriers: GET /v1/carriers — the account's carriers, live and
// removed.
func (s *Server) listCarriers(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.n.Carriers(r.Context())
	if err != nil {
		return err
	}
	out := make([]carrierJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, carrierJSON{DID: c.DID, Name: c.Name, Since: c.Since, Gen: c.Gen, Space: c.Space, Removed: c.Removed})
	}
	writeJSON(w, http.StatusOK, map[string]any{"carriers": out})
	return nil
}

// addCarrier: POST /v1/carriers {did, name?, relays?} — adds a carrier
// (06 §4.2) and answers {grant, new}: the CarryGrant the carrier takes
// (06 §4.3; pod null: the account lives in this node's store).
func (s *Server) addCarrier(w http.ResponseWriter, r *http.Request) error {
	o, err := s.readObject(r, []string{"did", "name", "relays"}, "did")
	if err != nil {
		return err
	}
	did, err := str(o, "did")
	if err != nil {
		return err
	}
	name, err := str(o, "name")
	if err != nil {
		return err
	}
	relays, err := strList(o, "relays")
	if err != nil {
		return err
	}
	added, err := s.n.AddCarrier(r.Context(), did, name)
	if err != nil {
		return err
	}
	g := &connect.CarryGrant{DID: s.n.Account(), Name: name, Space: added.Space, Invite: added.Invite, Relays: relays}
	b, err := canonical.Marshal(g.Value())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"grant": json.RawMessage(b), "new": added.New})
	return nil
}

// removeCarrier: DELETE /v1/carriers/{did} — removes a carrier (06 §4.2).
func (s *Server) removeCarrier(w http.ResponseWriter, r *http.Request) error {
	did := r.PathValue("did")
	if err := s.n.RemoveCarrier(r.Context(), did); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"removed": did})
	return nil
}
