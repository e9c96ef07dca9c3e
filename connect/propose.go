package connect

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/index"
)

// Limits of a proposal (06 §2.11).
const (
	MaxProposals         = 8              // automations one request offers
	MaxAutomationNameLen = 120            // characters of a Proposal's name
	MaxNotifyTextLen     = 500            // characters of then.text
	MaxProposalSpaces    = 256            // entries of a Proposal's spaces
	MaxWhereDepth        = index.MaxDepth // filters nested in where
	proposeV             = 2
)

// ProposeRequest offers the person automations of the account's own (06
// §2.11): "let me know when…". An app sends it over the exchange of §2.3
// in place of a ConnectRequest, told apart by kind.
type ProposeRequest struct {
	Name        string // what the app calls itself: shown, never trusted
	Automations []Proposal
}

// Proposal is one automation offered (06 §2.11). Query is kept as written;
// only its shape was checked, which is all the home checks.
type Proposal struct {
	Name       string
	Collection string            // when.query.collection
	Where      *canonical.Object // when.query.where; nil when absent
	Others     bool              // when.others; true when absent
	NotifyText string            // then.text; "" when then is absent
	Spaces     []string          // nil when absent: the app's whole reach
	Open       string            // "" when absent: "/"
}

// ParseHomeRequest reads what an app posted as request (06 §2.3 step 3,
// §2.11): a ProposeRequest when it has a kind, else a ConnectRequest.
// origin is the event's origin, the app's identity, which a proposal's
// open must be on. Exactly one of the two results is non-nil unless the
// request is malformed, which the home answers with minca:denied saying it
// did not understand (§2.3 step 4).
func ParseHomeRequest(data []byte, origin string) (*ConnectRequest, *ProposeRequest, error) {
	v, err := canonical.Parse(data)
	if err != nil {
		return nil, nil, refuse(CodeRequestShape, "", "not JSON: "+err.Error())
	}
	if o, ok := v.(*canonical.Object); ok && o.Has("kind") {
		p, err := DecodeProposeRequest(v, origin)
		return nil, p, err
	}
	r, err := DecodeConnectRequest(v)
	return r, nil, err
}

var (
	proposeMembers  = []string{"v", "kind", "name", "automations"}
	proposalMembers = []string{"name", "when", "then", "spaces", "open"}
)

// DecodeProposeRequest reads a ProposeRequest posted from origin and
// refuses it as malformed unless (06 §2.11): it has no member but v, kind,
// name and automations; v is 2; kind is "propose"; name is absent or a
// string of at most 80 characters; and automations has 1 to 8 entries, each
// a valid Proposal: no member but name (1–120 characters, not blank), when
// ({query, others?}: query {collection, where?} and nothing else, collection
// a collection name not under sys., where of the shape below; others a
// boolean), then ({kind: "notify", text}, text 1–500 characters, not
// blank), spaces (1–256 space ids) and open (an https:// address, or
// http:// on localhost, on origin).
//
// where is an object whose members are body field paths (segments of
// [a-zA-Z_][a-zA-Z0-9_]{0,63} joined by dots, at most 8), link:<role>,
// @key, @collection, @createdBy or @createdAt, each a value to equal or an
// object of the operators $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin
// (lists), $exists (a boolean) and $contains; or $and, $or (non-empty
// lists of filters) and $not (a filter); nested at most 16 deep. "$me"
// anywhere in it stands for the account: it is a value like any other
// here, since the home checks only the shape.
func DecodeProposeRequest(v any, origin string) (*ProposeRequest, error) {
	o, ok := v.(*canonical.Object)
	if !ok {
		return nil, refuse(CodeProposeShape, "", "a ProposeRequest is a JSON object (06 §2.11)")
	}
	for _, m := range o.Members {
		if !slices.Contains(proposeMembers, m.Name) {
			return nil, refuse(CodeProposeShape, m.Name, "a ProposeRequest has no member "+strconv.Quote(m.Name)+" (06 §2.11)")
		}
	}
	if ver, _ := o.Get("v"); ver != float64(proposeV) {
		return nil, refuse(CodeProposeVersion, "v", "a ProposeRequest's v is 2 (06 §2.11)")
	}
	if k, _ := o.Get("kind"); k != "propose" {
		return nil, refuse(CodeProposeKind, "kind", `kind is "propose" (06 §2.11)`)
	}
	p := &ProposeRequest{}
	if x, ok := o.Get("name"); ok {
		s, isStr := x.(string)
		if !isStr || canonical.UTF16Len(s) > MaxNameLen {
			return nil, refuse(CodeProposeName, "name", "name, when present, is a string of at most 80 characters (06 §2.11)")
		}
		p.Name = s
	}
	av, _ := o.Get("automations")
	al, ok := av.([]any)
	if !ok || len(al) < 1 || len(al) > MaxProposals {
		return nil, refuse(CodeProposeCount, "automations", "automations is a list of 1 to 8 proposals (06 §2.11)")
	}
	for i, e := range al {
		pr, err := decodeProposal(e, "automations["+strconv.Itoa(i)+"]", origin)
		if err != nil {
			return nil, err
		}
		p.Automations = append(p.Automations, pr)
	}
	return p, nil
}

func decodeProposal(v any, at, origin string) (Proposal, error) {
	pr := Proposal{Others: true}
	bad := func(field, msg string) (Proposal, error) {
		return Proposal{}, refuse(CodeProposeProposal, at+field, msg+" (06 §2.11)")
	}
	o, ok := v.(*canonical.Object)
	if !ok {
		return bad("", "a Proposal is an object {name, when, then?, spaces?, open?}")
	}
	for _, m := range o.Members {
		if !slices.Contains(proposalMembers, m.Name) {
			return Proposal{}, refuse(CodeProposeShape, at+"."+m.Name, "a Proposal has no member "+strconv.Quote(m.Name)+" (06 §2.11)")
		}
	}
	nv, _ := o.Get("name")
	name, ok := nv.(string)
	if !ok || canonical.UTF16Len(name) < 1 || canonical.UTF16Len(name) > MaxAutomationNameLen || strings.TrimSpace(name) == "" {
		return bad(".name", "name is a string of 1–120 characters, not blank")
	}
	pr.Name = name
	wv, _ := o.Get("when")
	when, ok := wv.(*canonical.Object)
	if !ok {
		return bad(".when", "when is an object {query, others?}")
	}
	for _, m := range when.Members {
		switch m.Name {
		case "query":
		case "others":
			b, isBool := m.Value.(bool)
			if !isBool {
				return bad(".when.others", "others, when present, is a boolean")
			}
			pr.Others = b
		default:
			return Proposal{}, refuse(CodeProposeShape, at+".when."+m.Name, "when is {query, others?} and nothing else (06 §2.11)")
		}
	}
	qv, _ := when.Get("query")
	var err error
	if pr.Collection, pr.Where, err = checkQuery(qv, at+".when.query"); err != nil {
		return Proposal{}, err
	}
	if tv, ok := o.Get("then"); ok {
		t, isObj := tv.(*canonical.Object)
		if !isObj || t.Len() != 2 {
			return bad(".then", `then is {kind: "notify", text}`)
		}
		if k, _ := t.Get("kind"); k != "notify" {
			return bad(".then.kind", `then's kind is "notify"`)
		}
		x, _ := t.Get("text")
		text, isStr := x.(string)
		if !isStr || canonical.UTF16Len(text) < 1 || canonical.UTF16Len(text) > MaxNotifyTextLen || strings.TrimSpace(text) == "" {
			return bad(".then.text", "then.text is a string of 1–500 characters, not blank")
		}
		pr.NotifyText = text
	}
	if sv, ok := o.Get("spaces"); ok {
		l, isList := stringList(sv, MaxProposalSpaces)
		if !isList || len(l) == 0 {
			return bad(".spaces", "spaces, when present, is a list of 1–256 space ids")
		}
		for i, s := range l {
			if _, err := canonical.ParseID(s); err != nil {
				return bad(".spaces["+strconv.Itoa(i)+"]", "a space id is a content id")
			}
		}
		pr.Spaces = l
	}
	if ov, ok := o.Get("open"); ok {
		s, isStr := ov.(string)
		if !isStr || !openOn(s, origin) {
			return bad(".open", "open is an https:// address, or http:// on localhost, on the request's origin "+strconv.Quote(origin))
		}
		pr.Open = s
	}
	return pr, nil
}

// openOn reports whether s is an https:// address on origin, or an
// http:// one on a localhost origin.
func openOn(s, origin string) bool {
	u, err := url.Parse(s)
	if err != nil || u.User != nil || u.Opaque != "" || u.Host == "" {
		return false
	}
	o, err := originOf(u)
	if err != nil || o != origin {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		return h == "localhost" || h == "127.0.0.1" || h == "::1"
	}
	return false
}

// checkQuery checks a proposal's query, {collection, where?} and nothing
// else, with the query parser every query goes through
// ([index.ParseProposal]), so what a home takes is what a node can answer.
func checkQuery(v any, at string) (string, *canonical.Object, error) {
	q, err := index.ParseProposal(v)
	if err != nil {
		var ie *index.Error
		if !errors.As(err, &ie) {
			return "", nil, refuse(CodeProposeQuery, at, err.Error())
		}
		code := CodeProposeQuery
		if ie.Code == index.CodeDepth {
			code = CodeProposeDepth
		}
		path := at
		if ie.Path != "" {
			path += "." + ie.Path
		}
		msg := ie.Message
		if !strings.Contains(msg, "06 §2.11") {
			msg += " (06 §2.11)"
		}
		return "", nil, refuse(code, path, msg)
	}
	wv, ok := v.(*canonical.Object).Get("where")
	if !ok {
		return q.Collection, nil, nil
	}
	return q.Collection, wv.(*canonical.Object), nil
}

// Proposed is the home's answer to a proposal (06 §2.11 step 5): the
// automations added or found, and, for an app with scope account that kept
// at least one, every version the home keeps of each, as stored.
type Proposed struct {
	Automations []ProposedAutomation
	// Versions are the sys.automation versions, as stored; nil when absent.
	Versions []any
}

// ProposedAutomation names one automation added or found.
type ProposedAutomation struct {
	ID   string
	Name string
}

// Value is the answer as JSON: {v: 2, kind: "proposed", automations,
// versions?}.
func (p *Proposed) Value() *canonical.Object {
	l := make([]any, len(p.Automations))
	for i, a := range p.Automations {
		l[i] = canonical.NewObject("id", a.ID, "name", a.Name)
	}
	o := canonical.NewObject("v", float64(proposeV), "kind", "proposed", "automations", l)
	if p.Versions != nil {
		o.Set("versions", p.Versions)
	}
	return o
}

// DecodeProposed reads the answer to a proposal: {v: 2, kind: "proposed",
// automations: {id, name}[], versions?: list}, nothing else.
func DecodeProposed(v any) (*Proposed, error) {
	bad := func(field, msg string) (*Proposed, error) {
		return nil, refuse(CodeProposedShape, field, msg+" (06 §2.11)")
	}
	o, ok := v.(*canonical.Object)
	if !ok {
		return bad("", "Proposed is an object {v: 2, kind: \"proposed\", automations, versions?}")
	}
	for _, m := range o.Members {
		if !slices.Contains([]string{"v", "kind", "automations", "versions"}, m.Name) {
			return bad(m.Name, "Proposed has no member "+strconv.Quote(m.Name))
		}
	}
	if ver, _ := o.Get("v"); ver != float64(proposeV) {
		return bad("v", "v is 2")
	}
	if k, _ := o.Get("kind"); k != "proposed" {
		return bad("kind", `kind is "proposed"`)
	}
	av, _ := o.Get("automations")
	al, ok := av.([]any)
	if !ok || len(al) > MaxProposals {
		return bad("automations", "automations is a list of at most 8 {id, name}")
	}
	p := &Proposed{Automations: make([]ProposedAutomation, 0, len(al))}
	for i, e := range al {
		at := "automations[" + strconv.Itoa(i) + "]"
		eo, ok := e.(*canonical.Object)
		if !ok || eo.Len() != 2 {
			return bad(at, "an automation is {id, name}")
		}
		id, ok1 := mustGet(eo, "id").(string)
		name, ok2 := mustGet(eo, "name").(string)
		if !ok1 || !ok2 {
			return bad(at, "an automation is {id, name}, both strings")
		}
		p.Automations = append(p.Automations, ProposedAutomation{ID: id, Name: name})
	}
	if vv, ok := o.Get("versions"); ok {
		if p.Versions, ok = vv.([]any); !ok {
			return bad("versions", "versions, when present, is a list of versions")
		}
	}
	return p, nil
}

func mustGet(o *canonical.Object, name string) any {
	v, _ := o.Get(name)
	return v
}
