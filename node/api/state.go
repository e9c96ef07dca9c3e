package api

import (
	"net/http"
	"strings"
)

// spaceState is GET /v1/spaces/{space}/state/{part}?asOf=ID,…: the space's
// state as `minca space PART` prints it (node.SpaceState), as
// {"lines": […]}: part is show, members, roles, definitions or history.
func (s *Server) spaceState(w http.ResponseWriter, r *http.Request) error {
	var asOf []string
	if a := r.URL.Query().Get("asOf"); a != "" {
		asOf = strings.Split(a, ",")
	}
	lines, err := s.n.SpaceState(r.Context(), r.PathValue("space"), r.PathValue("part"), asOf)
	if err != nil {
		return err
	}
	out := make([]any, len(lines))
	for i, l := range lines {
		out[i] = l
	}
	writeJSON(w, http.StatusOK, map[string]any{"lines": out})
	return nil
}
