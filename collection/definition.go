package collection

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// DefinitionCollection is the reserved collection definitions are records
// of, and KeyPrefix the start of their keys: "collection:" + name (02 §6.1).
const (
	DefinitionCollection = "sys.collection"
	KeyPrefix            = "collection:"
)

// History is a definition's history member (02 §6.1).
type History int

const (
	// HistoryLatest is the default: superseded versions are kept as stubs.
	HistoryLatest History = iota
	// HistoryAll: writers mark every version retain (§4.5).
	HistoryAll
)

func (h History) String() string {
	if h == HistoryAll {
		return "all"
	}
	return "latest"
}

// Definition is a valid collection definition body (02 §6.1), read into a
// typed value by [ParseDefinition]. Nothing downstream re-checks what the
// parser proved. A Definition is immutable and safe to share; its fields
// must not be changed.
type Definition struct {
	Name        string // ^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$, never sys.*
	Title       string
	Description string
	Schema      *Schema // the body's schema, publishing subset (§6.2)
	Version     int64   // 1 … 2^53 − 1 (§6.3)
	History     History
	// Links are the declared link roles (§5.2), sorted by Rel. A definition
	// without links declares none.
	Links  []LinkDecl
	Rules  Rules
	Topics []Topic // at most 8, distinct (§8.1)
	// Contract is kept as given and never read, not even its type (§7.6).
	HasContract bool
	Contract    any

	body any // the body as given, for its canonical form
}

// Body returns the definition body as it was given, every member included.
// Rival definitions with the same canonical body agree (02 §6.3).
func (d *Definition) Body() any { return d.body }

// Link returns the declaration of a link role, if the definition has one.
func (d *Definition) Link(rel string) (LinkDecl, bool) {
	i, ok := slices.BinarySearchFunc(d.Links, rel, func(l LinkDecl, rel string) int { return strings.Compare(l.Rel, rel) })
	if !ok {
		return LinkDecl{}, false
	}
	return d.Links[i], true
}

// LinkDecl declares one link role (02 §5.2).
type LinkDecl struct {
	Rel string
	// To lists the collections a target may be in; nil means "*", any.
	To          []string
	One         bool // cardinality "one": at most one link of this role
	Description string
}

// AnyTarget reports whether the role may point into any collection ("*").
func (l LinkDecl) AnyTarget() bool { return l.To == nil }

// Rules are a definition's rules (02 §7). The zero value has none.
type Rules struct {
	OnePer []Part   // nil when absent; else non-empty (§7.3)
	Fixed  []string // nil when absent; else non-empty top-level field names (§7.4)
	Final  bool     // written once (§7.4)
}

// HasOnePer reports whether there is a onePer rule.
func (r Rules) HasOnePer() bool { return len(r.OnePer) > 0 }

// OnePerWithAuthor reports whether the onePer rule names @author, so its
// keys are owned (02 §7.3).
func (r Rules) OnePerWithAuthor() bool {
	for _, p := range r.OnePer {
		if p.Kind == PartAuthor {
			return true
		}
	}
	return false
}

// PartKind is which of 02 §7.3's kinds a onePer part is.
type PartKind int

const (
	PartField  PartKind = iota // a top-level body field (no dotted paths)
	PartAuthor                 // @author: the writer's root DID
	PartLink                   // link:<rel>: the to of the first link of that role
)

// Part is one part of a onePer rule, as the definition names it.
type Part struct {
	Kind PartKind
	Name string // the field, or the link role; "" for @author
}

func (p Part) String() string {
	switch p.Kind {
	case PartAuthor:
		return "@author"
	case PartLink:
		return "link:" + p.Name
	}
	return p.Name
}

func parsePart(s string) Part {
	switch {
	case s == "@author":
		return Part{Kind: PartAuthor}
	case strings.HasPrefix(s, "link:"):
		return Part{Kind: PartLink, Name: s[len("link:"):]}
	}
	return Part{Kind: PartField, Name: s}
}

// Topic is one topic (02 §8.1): a field path of up to four segments, or a
// link role.
type Topic struct {
	Path []string // the field path's segments; nil for a link role
	Rel  string   // the link role; "" for a field path
}

// String is the topic as the definition names it, which tags hash:
// "mentions", "link:in".
func (t Topic) String() string {
	if t.Rel != "" {
		return "link:" + t.Rel
	}
	return strings.Join(t.Path, ".")
}

// IsLink reports whether the topic is a link role.
func (t Topic) IsLink() bool { return t.Rel != "" }

// ParseTopic reads one topic string (02 §8.1).
func ParseTopic(s string) (Topic, bool) {
	if rel, ok := strings.CutPrefix(s, "link:"); ok {
		if !record.ValidRel(rel) {
			return Topic{}, false
		}
		return Topic{Rel: rel}, true
	}
	segs := strings.Split(s, ".")
	if len(segs) > 4 {
		return Topic{}, false
	}
	for _, seg := range segs {
		if !validSegment(seg) {
			return Topic{}, false
		}
	}
	return Topic{Path: segs}, true
}

// validSegment: ^[a-zA-Z_][a-zA-Z0-9_]{0,63}$.
func validSegment(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ValidName reports whether s is a collection name a definition may have:
// ^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$ and not sys.* (02 §6.1, §6.4).
func ValidName(s string) bool { return namePattern(s) && !record.IsSys(s) }

func namePattern(s string) bool {
	segs := strings.Split(s, ".")
	if len(segs) < 2 {
		return false
	}
	for _, seg := range segs {
		if seg == "" || seg[0] < 'a' || seg[0] > 'z' {
			return false
		}
		for i := 1; i < len(seg); i++ {
			c := seg[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// ParseDefinition reads a definition body (02 §6.1) into a [Definition],
// or returns an [*Invalid] listing every reason it is invalid: a peer then
// treats the collection as having no definition (no schema, no rules, no
// topics). Members not listed in §6.1 are ignored; contract is kept and
// never read (§7.6). Its time and memory are linear in the body's size.
func ParseDefinition(body any) (*Definition, error) {
	var rs reasons
	d := &Definition{body: body}
	o, ok := body.(*canonical.Object)
	if !ok {
		rs.add(CodeDefObject, "$", "a definition body is a JSON object, got "+jsonType(body)+" (02 §6.1)")
		return nil, &Invalid{Reasons: rs.result()}
	}
	var hasName, hasSchema, hasVersion bool
	for _, m := range o.Members {
		path := member("$", m.Name)
		switch m.Name {
		case "name":
			hasName = true
			s, ok := m.Value.(string)
			switch {
			case !ok:
				rs.add(CodeDefName, path, "name is a string, got "+jsonType(m.Value)+" (02 §6.1)")
			case record.IsSys(s):
				rs.add(CodeDefName, path, "sys.* names belong to the protocol: a definition must not name one (02 §6.4)")
			case !namePattern(s):
				rs.add(CodeDefName, path, "name is lower case with at least one dot, ^[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*)+$ (02 §6.1)")
			default:
				d.Name = s
			}
		case "title", "description":
			s, ok := m.Value.(string)
			if !ok {
				code := CodeDefTitle
				if m.Name == "description" {
					code = CodeDefDescription
				}
				rs.add(code, path, m.Name+" is a string, got "+jsonType(m.Value)+" (02 §6.1)")
			} else if m.Name == "title" {
				d.Title = s
			} else {
				d.Description = s
			}
		case "schema":
			hasSchema = true
			if _, ok := m.Value.(*canonical.Object); !ok {
				rs.add(CodeDefSchema, path, "schema is a JSON object, got "+jsonType(m.Value)+" (02 §6.1)")
				continue
			}
			d.Schema = parseSchemaAt(m.Value, path, &rs)
		case "version":
			hasVersion = true
			f, ok := m.Value.(float64)
			if !ok || f < 1 || f > record.MaxSafeInteger || f != math.Trunc(f) {
				rs.add(CodeDefVersion, path, "version is a whole number from 1 (at most 2^53 − 1) (02 §6.1, §6.3)")
				continue
			}
			d.Version = int64(f)
		case "history":
			switch m.Value {
			case "latest":
				d.History = HistoryLatest
			case "all":
				d.History = HistoryAll
			default:
				rs.add(CodeDefHistory, path, `history is "latest" or "all" (02 §6.1)`)
			}
		case "links":
			d.Links = parseLinkDecls(m.Value, path, &rs)
		case "rules":
			d.Rules = parseRules(m.Value, path, &rs)
		case "topics":
			d.Topics = parseTopics(m.Value, path, &rs)
		case "contract":
			d.HasContract, d.Contract = true, m.Value
		}
	}
	if !hasName {
		rs.add(CodeDefName, "$.name", "name is required (02 §6.1)")
	}
	if !hasSchema {
		rs.add(CodeDefSchema, "$.schema", "schema is required (02 §6.1)")
	}
	if !hasVersion {
		rs.add(CodeDefVersion, "$.version", "version is required (02 §6.1)")
	}
	if len(rs.list) > 0 {
		return nil, &Invalid{Reasons: rs.result()}
	}
	return d, nil
}

// ParseDefinitionVersion reads the definition a version of a definition
// record carries (02 §6.1): it must be in sys.collection, not a delete, and
// at the key "collection:" + its name; body is its body as this peer reads
// it (the version's own in a public space, the opened one in a private
// space). Otherwise the definition is invalid, and counts as none.
func ParseDefinitionVersion(v *record.Version, body any) (*Definition, error) {
	if v.Collection != DefinitionCollection {
		return nil, &Invalid{Reasons: []Reason{{Code: CodeDefCollection, Path: "collection",
			Message: "a definition is a record in sys.collection, not " + strconv.Quote(v.Collection) + " (02 §6.1)"}}}
	}
	if v.Deleted {
		return nil, &Invalid{Reasons: []Reason{{Code: CodeDefDeleted, Path: "deleted",
			Message: "a delete of a definition record is no definition (02 §6.1)"}}}
	}
	d, err := ParseDefinition(body)
	if err != nil {
		return nil, err
	}
	if v.Key != KeyPrefix+d.Name {
		return nil, &Invalid{Reasons: []Reason{{Code: CodeDefKey, Path: "key",
			Message: "the key of a definition record is \"collection:\" + its name, " + strconv.Quote(KeyPrefix+d.Name) + ", got " + strconv.Quote(v.Key) + " (02 §6.1)"}}}
	}
	return d, nil
}

func parseLinkDecls(v any, path string, rs *reasons) []LinkDecl {
	o, ok := v.(*canonical.Object)
	if !ok {
		rs.add(CodeDefLinks, path, "links is an object of link declarations by role, got "+jsonType(v)+" (02 §5.2)")
		return nil
	}
	out := make([]LinkDecl, 0, len(o.Members))
	for _, m := range o.Members {
		p := member(path, m.Name)
		if !record.ValidRel(m.Name) {
			rs.add(CodeDefLinks, p, "a declared role is a link role, ^[a-z][a-zA-Z0-9]{0,63}$ (02 §5.1, §5.2)")
			continue
		}
		decl, ok := m.Value.(*canonical.Object)
		if !ok {
			rs.add(CodeDefLinks, p, "a link declaration is an object {to, cardinality?, description?}, got "+jsonType(m.Value)+" (02 §5.2)")
			continue
		}
		l, good := LinkDecl{Rel: m.Name}, true
		to, hasTo := decl.Get("to")
		switch x := to.(type) {
		case string:
			if x != "*" {
				rs.add(CodeDefLinks, member(p, "to"), `to is "*" or a non-empty list of collection names (02 §5.2)`)
				good = false
			}
		case []any:
			if len(x) == 0 {
				rs.add(CodeDefLinks, member(p, "to"), `to is "*" or a non-empty list of collection names (02 §5.2)`)
				good = false
			}
			l.To = make([]string, 0, len(x))
			for i, e := range x {
				s, ok := e.(string)
				if !ok {
					rs.add(CodeDefLinks, index(member(p, "to"), i), "each collection in to is a string, got "+jsonType(e)+" (02 §5.2)")
					good = false
					continue
				}
				l.To = append(l.To, s)
			}
		default:
			if !hasTo {
				rs.add(CodeDefLinks, member(p, "to"), `a link declaration names the collections its targets may be in, to: "*" or a list (02 §5.2)`)
			} else {
				rs.add(CodeDefLinks, member(p, "to"), `to is "*" or a non-empty list of collection names, got `+jsonType(to)+" (02 §5.2)")
			}
			good = false
		}
		if c, ok := decl.Get("cardinality"); ok {
			switch c {
			case "one":
				l.One = true
			case "many":
			default:
				rs.add(CodeDefLinks, member(p, "cardinality"), `cardinality is "one" or "many" (02 §5.2)`)
				good = false
			}
		}
		if d, ok := decl.Get("description"); ok {
			s, ok := d.(string)
			if !ok {
				rs.add(CodeDefLinks, member(p, "description"), "description is a string, got "+jsonType(d)+" (02 §5.2)")
				good = false
			}
			l.Description = s
		}
		if good {
			out = append(out, l)
		}
	}
	sortLinkDecls(out)
	return out
}

func sortLinkDecls(ls []LinkDecl) {
	slices.SortFunc(ls, func(a, b LinkDecl) int { return strings.Compare(a.Rel, b.Rel) })
}

func parseRules(v any, path string, rs *reasons) Rules {
	var r Rules
	o, ok := v.(*canonical.Object)
	if !ok {
		rs.add(CodeDefRules, path, "rules is an object of onePer, fixed and final, got "+jsonType(v)+" (02 §7.5)")
		return r
	}
	for _, m := range o.Members {
		p := member(path, m.Name)
		switch m.Name {
		case "onePer":
			names := stringList(m.Value, p, "onePer", rs)
			if names != nil {
				r.OnePer = make([]Part, len(names))
				for i, n := range names {
					r.OnePer[i] = parsePart(n)
				}
			}
		case "fixed":
			r.Fixed = stringList(m.Value, p, "fixed", rs)
		case "final":
			if m.Value != true {
				rs.add(CodeDefRules, p, "final is true when present (02 §7.4, §7.5)")
				continue
			}
			r.Final = true
		case "create", "edit", "delete", "check", "permissions":
			rs.add(CodeDefRules, p, "rules say nothing about people: "+m.Name+" is not a rule; who may write is the space's grants, and a check is the contract's (02 §7, §7.5)")
		default:
			rs.add(CodeDefRules, p, "rules has no members but onePer, fixed and final (02 §7.5)")
		}
	}
	return r
}

// stringList reads a non-empty list of non-empty strings (02 §7.5).
func stringList(v any, path, what string, rs *reasons) []string {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		rs.add(CodeDefRules, path, what+" is a non-empty list of non-empty strings (02 §7.5)")
		return nil
	}
	out := make([]string, 0, len(arr))
	good := true
	for i, e := range arr {
		s, ok := e.(string)
		if !ok || s == "" {
			rs.add(CodeDefRules, index(path, i), what+" is a non-empty list of non-empty strings (02 §7.5)")
			good = false
			continue
		}
		out = append(out, s)
	}
	if !good {
		return nil
	}
	return out
}

func parseTopics(v any, path string, rs *reasons) []Topic {
	arr, ok := v.([]any)
	if !ok {
		rs.add(CodeDefTopics, path, "topics is a list of at most 8 distinct strings (02 §8.1)")
		return nil
	}
	if len(arr) > record.MaxTopics {
		rs.add(CodeDefTopics, path, "topics names at most 8 topics, got "+strconv.Itoa(len(arr))+" (02 §8.1, §10)")
		return nil
	}
	out := make([]Topic, 0, len(arr))
	for i, e := range arr {
		p := index(path, i)
		s, ok := e.(string)
		if !ok {
			rs.add(CodeDefTopics, p, "a topic is a string, got "+jsonType(e)+" (02 §8.1)")
			continue
		}
		t, ok := ParseTopic(s)
		if !ok {
			rs.add(CodeDefTopics, p, "a topic is a field path of up to four segments, ^[a-zA-Z_][a-zA-Z0-9_]{0,63}(\\.[a-zA-Z_][a-zA-Z0-9_]{0,63}){0,3}$, or a link role, ^link:[a-z][a-zA-Z0-9]{0,63}$ (02 §8.1)")
			continue
		}
		dup := false
		for _, prev := range out {
			if prev.String() == s {
				dup = true
			}
		}
		if dup {
			rs.add(CodeDefTopics, p, "topics are distinct: "+strconv.Quote(s)+" is named twice (02 §8.1)")
			continue
		}
		out = append(out, t)
	}
	return out
}
