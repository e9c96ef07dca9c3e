package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

func (s *Server) routes() {
	h := func(pattern string, f func(w http.ResponseWriter, r *http.Request) error) {
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := f(w, r); err != nil {
				s.fail(w, r, err)
			}
		})
	}
	h("GET /v1/node", s.getNode)
	h("GET /v1/spaces", s.listSpaces)
	h("POST /v1/spaces", s.createSpace)
	h("POST /v1/spaces/join", s.joinSpace)
	h("GET /v1/spaces/{space}/members", s.listMembers)
	h("GET /v1/spaces/{space}/state/{part}", s.spaceState)
	h("POST /v1/spaces/{space}/members", s.assign)
	h("DELETE /v1/spaces/{space}/members/{member}", s.remove)
	h("POST /v1/spaces/{space}/invites", s.invite)
	h("POST /v1/spaces/{space}/leave", s.leave)
	h("PUT /v1/spaces/{space}/collections/{name}", s.define)
	h("POST /v1/spaces/{space}/records", s.put)
	h("GET /v1/spaces/{space}/records/{key}", s.get)
	h("DELETE /v1/spaces/{space}/records/{key}", s.del)
	h("GET /v1/spaces/{space}/records/{key}/history", s.history)
	h("POST /v1/spaces/{space}/query", s.query)
	h("GET /v1/spaces/{space}/query/live", s.liveQuery)
	h("GET /v1/spaces/{space}/events", s.events)
	h("GET /v1/events", s.events)
	h("GET /v1/carriers", s.listCarriers)
	h("POST /v1/carriers", s.addCarrier)
	h("DELETE /v1/carriers/{did}", s.removeCarrier)
	h("GET /v1/peers", s.listPeers)
	h("POST /v1/backup", s.backup)
	h("POST /v1/restore", s.restore)
	s.fileRoutes(h)
	h("/", func(w http.ResponseWriter, r *http.Request) error {
		return bad(CodeNotFound, "", "no route "+r.Method+" "+r.URL.Path+" (docs/api.md)")
	})
}

func (s *Server) getNode(w http.ResponseWriter, r *http.Request) error {
	sess, note, err := s.n.Session()
	if err != nil {
		return err
	}
	out := map[string]any{"account": s.n.Account(), "session": sess, "accountKey": s.n.HasAccountKey(),
		"registry": s.n.Registry(), "dir": s.n.Dir()}
	if note.HasExp {
		out["noteExpires"] = note.Exp
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) listSpaces(w http.ResponseWriter, r *http.Request) error {
	sps, err := s.n.Spaces(r.Context())
	if err != nil {
		return err
	}
	if sps == nil {
		sps = []node.SpaceInfo{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"spaces": sps})
	return nil
}

func (s *Server) createSpace(w http.ResponseWriter, r *http.Request) error {
	o, err := s.readObject(r, []string{"name", "roles", "founders", "private"}, "name")
	if err != nil {
		return err
	}
	name, err := str(o, "name")
	if err != nil {
		return err
	}
	co := &node.CreateOptions{}
	if co.Founders, err = strList(o, "founders"); err != nil {
		return err
	}
	if pv, ok := o.Get("private"); ok {
		if co.Private, ok = pv.(bool); !ok {
			return bad(CodeBad, "private", "private is true or false")
		}
	}
	if rv, ok := o.Get("roles"); ok {
		ro, isObj := rv.(*canonical.Object)
		if !isObj {
			return bad(CodeBad, "roles", `roles is {"name": [{"cmd", "pol"?}…]}`)
		}
		co.Roles = map[string][]space.Grant{}
		for _, m := range ro.Members {
			gs, err := space.ParseGrants(m.Value, "roles."+m.Name)
			if rf, ok := err.(*record.Refusal); ok {
				return bad(CodeBad, rf.Field, rf.Message)
			}
			if err != nil {
				return err
			}
			co.Roles[m.Name] = gs
		}
	}
	g, err := s.n.CreateSpace(r.Context(), name, co)
	if rf, ok := err.(*record.Refusal); ok {
		return bad(CodeGenesis, rf.Field, rf.Message)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": g.ID, "genesis": json.RawMessage(g.Canonical())})
	return nil
}

func (s *Server) joinSpace(w http.ResponseWriter, r *http.Request) error {
	o, err := s.readObject(r, []string{"invite", "genesis", "id"})
	if err != nil {
		return err
	}
	inv, err := str(o, "invite")
	if err != nil {
		return err
	}
	var g *space.Genesis
	switch gv, hasG := o.Get("genesis"); {
	case inv != "" && !hasG:
		if g, err = s.n.JoinInvite(r.Context(), inv); err != nil {
			return err
		}
	case inv == "" && hasG:
		id, err := str(o, "id")
		if err != nil {
			return err
		}
		raw, _ := canonical.Marshal(gv)
		if g, err = s.n.JoinGenesisJSON(r.Context(), id, raw); err != nil {
			if _, ok := err.(*record.Refusal); ok {
				return bad(CodeGenesis, "genesis", err.Error())
			}
			return err
		}
	default:
		return bad(CodeMissing, "invite", "join by an invite or by a genesis (with its id), one of them")
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": g.ID, "name": g.Name})
	return nil
}

func (s *Server) listMembers(w http.ResponseWriter, r *http.Request) error {
	ms, err := s.n.Members(r.Context(), r.PathValue("space"))
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(ms))
	for _, m := range ms {
		roles := m.Roles
		if roles == nil {
			roles = []string{}
		}
		out = append(out, map[string]any{"member": m.Root, "founder": m.Founder, "roles": roles})
	}
	writeJSON(w, http.StatusOK, map[string]any{"members": out})
	return nil
}

func (s *Server) assign(w http.ResponseWriter, r *http.Request) error {
	o, err := s.readObject(r, []string{"member", "roles"}, "member", "roles")
	if err != nil {
		return err
	}
	m, err := str(o, "member")
	if err != nil {
		return err
	}
	roles, err := strList(o, "roles")
	if err != nil {
		return err
	}
	v, err := s.n.Assign(r.Context(), r.PathValue("space"), m, roles)
	return s.version(w, v, err)
}

func (s *Server) remove(w http.ResponseWriter, r *http.Request) error {
	v, err := s.n.Remove(r.Context(), r.PathValue("space"), r.PathValue("member"))
	return s.version(w, v, err)
}

func (s *Server) invite(w http.ResponseWriter, r *http.Request) error {
	o, err := s.readObject(r, []string{"roles"}, "roles")
	if err != nil {
		return err
	}
	roles, err := strList(o, "roles")
	if err != nil {
		return err
	}
	inv, err := s.n.Invite(r.Context(), r.PathValue("space"), roles)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"invite": inv})
	return nil
}

func (s *Server) leave(w http.ResponseWriter, r *http.Request) error {
	if err := s.n.Leave(r.Context(), r.PathValue("space")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"left": r.PathValue("space")})
	return nil
}

func (s *Server) define(w http.ResponseWriter, r *http.Request) error {
	o, err := s.readObject(r, []string{"name", "title", "description", "schema", "version", "history", "links", "rules", "topics", "contract"}, "name", "schema", "version")
	if err != nil {
		return err
	}
	if name, _ := o.Get("name"); name != r.PathValue("name") {
		return bad(CodeBad, "name", "the definition's name is the collection in the path")
	}
	v, err := s.n.Define(r.Context(), r.PathValue("space"), o)
	return s.version(w, v, err)
}

// version answers with a signed version, 201.
func (s *Server) version(w http.ResponseWriter, v *record.Version, err error) error {
	if err != nil {
		return err
	}
	b, err := v.MarshalJSON()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, b)
	return nil
}

func (s *Server) put(w http.ResponseWriter, r *http.Request) error {
	o, err := s.readObject(r, []string{"collection", "key", "body", "links", "files"}, "collection", "body")
	if err != nil {
		return err
	}
	coll, err := str(o, "collection")
	if err != nil {
		return err
	}
	po := &node.PutOptions{}
	if po.Key, err = str(o, "key"); err != nil {
		return err
	}
	if lv, ok := o.Get("links"); ok {
		if po.Links, err = record.ParseLinks(lv); err != nil {
			return bad(CodeBad, "links", err.Error())
		}
	}
	if fv, ok := o.Get("files"); ok {
		raw, _ := canonical.Marshal(fv)
		if err := json.Unmarshal(raw, &po.Files); err != nil {
			return bad(CodeBad, "files", "files is a list of {hash, size}, hash a file's content id: "+err.Error())
		}
	}
	body, _ := o.Get("body")
	v, err := s.n.Put(r.Context(), r.PathValue("space"), coll, body, po)
	return s.version(w, v, err)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) error {
	rd, err := s.n.Get(r.Context(), r.PathValue("space"), r.PathValue("key"))
	if err != nil {
		return err
	}
	b, err := rd.JSON()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

func (s *Server) del(w http.ResponseWriter, r *http.Request) error {
	v, err := s.n.Delete(r.Context(), r.PathValue("space"), r.PathValue("key"))
	return s.version(w, v, err)
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	hs, err := s.n.History(r.Context(), r.PathValue("space"), r.PathValue("key"))
	if err != nil {
		return err
	}
	if len(hs) == 0 {
		return bad(CodeNotFound, "key", "no record "+r.PathValue("key")+" is held in "+r.PathValue("space"))
	}
	out := make([]map[string]any, 0, len(hs))
	for _, h := range hs {
		b, err := h.JSON()
		if err != nil {
			return err
		}
		out = append(out, map[string]any{"version": json.RawMessage(b), "standing": h.Standing.String(), "stored": h.Stored.String()})
	}
	writeJSON(w, http.StatusOK, map[string]any{"history": out})
	return nil
}

// query answers a query (06 §2.11, docs/queries.md) through the node's
// index: {entries, next}, each entry a version as canonical JSON, written
// as it is. The body's size and depth are the API's to bound; what it may
// hold is the query format's (index.Parse), refused with its codes.
func (s *Server) query(w http.ResponseWriter, r *http.Request) error {
	raw, err := s.readBody(r)
	if err != nil {
		return err
	}
	p, err := s.n.Query(r.Context(), r.PathValue("space"), raw)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString(`{"entries":[`)
	for i, e := range p.Entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	next, _ := json.Marshal(p.Next)
	b.WriteString(`],"next":`)
	b.Write(next)
	b.WriteByte('}')
	writeJSON(w, http.StatusOK, b.Bytes())
	return nil
}

func (s *Server) listPeers(w http.ResponseWriter, r *http.Request) error {
	ps := []peers.Status{}
	if s.o.Peers != nil {
		ps = s.o.Peers.Status()
	}
	writeJSON(w, http.StatusOK, map[string]any{"peers": ps})
	return nil
}
