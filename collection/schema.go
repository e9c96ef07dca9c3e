package collection

import (
	"strconv"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// Types is a set of JSON Schema types (02 §6.2 `type`). The zero value is no
// `type` keyword: any value.
type Types uint8

// The seven types of the dialect.
const (
	TypeObject Types = 1 << iota
	TypeArray
	TypeString
	TypeNumber
	TypeInteger
	TypeBoolean
	TypeNull
)

var typeNames = [...]string{"object", "array", "string", "number", "integer", "boolean", "null"}

func typeOf(name string) (Types, bool) {
	for i, n := range typeNames {
		if n == name {
			return 1 << i, true
		}
	}
	return 0, false
}

func (t Types) String() string {
	var names []string
	for i, n := range typeNames {
		if t&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// Schema is a schema of the dialect of 02 §6.2, read into a typed value.
// One returned by [ParseSchema] or inside a [Definition] passed the
// publishing check; one from [ReadSchema] may have had keywords ignored.
// A Schema is immutable once returned and safe to share; its fields must
// not be changed.
type Schema struct {
	Types      Types      // type; 0 when absent
	Properties []Property // properties, in the order given
	Required   []string   // required
	Items      *Schema    // items; nil when absent

	HasEnum  bool
	Enum     []any // enum, non-empty when HasEnum
	HasConst bool
	Const    any // const

	Minimum, Maximum     *float64 // minimum, maximum (inclusive)
	MinLength, MaxLength *float64 // in Unicode code points; a lone surrogate counts as one
	MinItems, MaxItems   *float64

	AdditionalProperties *bool // nil when absent

	Title, Description string
	OneOf              []Choice     // labelled choices; nil when absent
	ChoicesFrom        *ChoicesFrom // x-choicesFrom; nil when absent
	// Annotations are the other x-… keywords, as given. They say nothing
	// about whether a body fits (§6.2).
	Annotations []canonical.Member

	enumSet    map[string]struct{} // canonical forms of Enum
	constCanon string              // canonical form of Const
	propIndex  map[string]*Schema  // by name, for many properties
}

// Property is one member of a schema's properties.
type Property struct {
	Name   string
	Schema *Schema
}

// Choice is one labelled choice of oneOf: {const, title?, description?}
// (02 §6.2).
type Choice struct {
	Const       any
	Title       string
	Description string
	canon       string
}

// ChoicesFrom is the x-choicesFrom annotation: the choices are the values
// of field in the record a link of role rel points at (02 §6.1 example).
// It is an annotation: what it means to an app is not protocol.
type ChoicesFrom struct {
	Rel   string
	Field string
}

// Property returns the schema of the property named name, if declared.
func (s *Schema) Property(name string) (*Schema, bool) {
	if s.propIndex != nil {
		p, ok := s.propIndex[name]
		return p, ok
	}
	for _, p := range s.Properties {
		if p.Name == name {
			return p.Schema, true
		}
	}
	return nil, false
}

// ParseSchema reads a schema under the publishing check of 02 §6.2: the
// schema, and recursively every schema under properties and items, uses
// only the keywords of the subset with their value types; x-… annotations
// are accepted with any value; oneOf only as labelled choices. Anything else
// (pattern, $ref, format, anyOf, $schema, a schema-valued
// additionalProperties, …) makes it invalid: the error is an [*Invalid]
// with every reason, paths starting at "$".
func ParseSchema(v any) (*Schema, error) {
	var rs reasons
	s := parseSchemaAt(v, "$", &rs)
	if len(rs.list) > 0 {
		return nil, &Invalid{Reasons: rs.result()}
	}
	return s, nil
}

func parseSchemaAt(v any, path string, rs *reasons) *Schema {
	c := compiler{strict: true, rs: rs}
	return c.schema(v, path, 1)
}

// ReadSchema reads a schema as a reader validating bodies does (02 §6.2,
// §9.6): keywords it does not know, and known keywords whose value it can't
// use, are ignored. Only this implementation's bounds ([MaxSchemaDepth],
// [MaxEnum]) refuse a schema, with an [*Invalid] of [CodeDefBound] reasons.
func ReadSchema(v any) (*Schema, error) {
	var rs reasons
	c := compiler{strict: false, rs: &rs}
	s := c.schema(v, "$", 1)
	if len(rs.list) > 0 {
		return nil, &Invalid{Reasons: rs.result()}
	}
	return s, nil
}

// compiler walks a schema once. strict is the publishing check; otherwise
// only bounds are reasons.
type compiler struct {
	strict bool
	rs     *reasons
}

func (c *compiler) fail(path, msg string) {
	if c.strict {
		c.rs.add(CodeDefSchema, path, msg)
	}
}

func (c *compiler) schema(v any, path string, depth int) *Schema {
	if depth > MaxSchemaDepth {
		c.rs.add(CodeDefBound, path, "schemas nest at most "+strconv.Itoa(MaxSchemaDepth)+" deep through properties and items (this implementation's bound)")
		return nil
	}
	o, ok := v.(*canonical.Object)
	if !ok {
		c.fail(path, "a schema is a JSON object, got "+jsonType(v)+" (02 §6.2)")
		return &Schema{}
	}
	s := &Schema{}
	for _, m := range o.Members {
		c.keyword(s, m.Name, m.Value, member(path, m.Name), depth)
	}
	if len(s.Properties) > 8 {
		s.propIndex = make(map[string]*Schema, len(s.Properties))
		for _, p := range s.Properties {
			s.propIndex[p.Name] = p.Schema
		}
	}
	return s
}

func (c *compiler) keyword(s *Schema, kw string, v any, path string, depth int) {
	switch kw {
	case "type":
		c.types(s, v, path)
	case "properties":
		o, ok := v.(*canonical.Object)
		if !ok {
			c.fail(path, "properties is an object of schemas, got "+jsonType(v)+" (02 §6.2)")
			return
		}
		s.Properties = make([]Property, 0, len(o.Members))
		for _, m := range o.Members {
			if sub := c.schema(m.Value, member(path, m.Name), depth+1); sub != nil {
				s.Properties = append(s.Properties, Property{Name: m.Name, Schema: sub})
			}
		}
	case "required":
		arr, ok := v.([]any)
		if !ok {
			c.fail(path, "required is a list of strings, got "+jsonType(v)+" (02 §6.2)")
			return
		}
		req := make([]string, 0, len(arr))
		for i, e := range arr {
			name, ok := e.(string)
			if !ok {
				c.fail(index(path, i), "required is a list of strings, got "+jsonType(e)+" (02 §6.2)")
				continue
			}
			req = append(req, name)
		}
		s.Required = req
	case "items":
		if _, ok := v.(*canonical.Object); !ok {
			c.fail(path, "items is one schema, a JSON object, got "+jsonType(v)+" (02 §6.2)")
			return
		}
		s.Items = c.schema(v, path, depth+1)
	case "enum":
		arr, ok := v.([]any)
		if !ok || len(arr) == 0 {
			c.fail(path, "enum is a non-empty list (02 §6.2)")
			return
		}
		if len(arr) > MaxEnum {
			c.rs.add(CodeDefBound, path, "enum lists at most "+strconv.Itoa(MaxEnum)+" values (this implementation's bound), got "+strconv.Itoa(len(arr)))
			return
		}
		set := make(map[string]struct{}, len(arr))
		for i, e := range arr {
			b, err := canonical.Marshal(e)
			if err != nil {
				c.fail(index(path, i), "enum value has no canonical form: "+err.Error())
				return
			}
			set[string(b)] = struct{}{}
		}
		s.HasEnum, s.Enum, s.enumSet = true, arr, set
	case "const":
		b, err := canonical.Marshal(v)
		if err != nil {
			c.fail(path, "const has no canonical form: "+err.Error())
			return
		}
		s.HasConst, s.Const, s.constCanon = true, v, string(b)
	case "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems":
		f, ok := v.(float64)
		if !ok {
			c.fail(path, kw+" is a finite number, got "+jsonType(v)+" (02 §6.2)")
			return
		}
		p := &f
		switch kw {
		case "minimum":
			s.Minimum = p
		case "maximum":
			s.Maximum = p
		case "minLength":
			s.MinLength = p
		case "maxLength":
			s.MaxLength = p
		case "minItems":
			s.MinItems = p
		case "maxItems":
			s.MaxItems = p
		}
	case "additionalProperties":
		b, ok := v.(bool)
		if !ok {
			c.fail(path, "additionalProperties is a boolean only, not a schema (02 §6.2), got "+jsonType(v))
			return
		}
		s.AdditionalProperties = &b
	case "title", "description":
		str, ok := v.(string)
		if !ok {
			c.fail(path, kw+" is a string, got "+jsonType(v)+" (02 §6.2)")
			return
		}
		if kw == "title" {
			s.Title = str
		} else {
			s.Description = str
		}
	case "oneOf":
		c.oneOf(s, v, path)
	case "x-choicesFrom":
		c.choicesFrom(s, v, path)
	default:
		if strings.HasPrefix(kw, "x-") {
			s.Annotations = append(s.Annotations, canonical.Member{Name: kw, Value: v})
			return
		}
		c.fail(path, unknownKeyword(kw))
	}
}

func unknownKeyword(kw string) string {
	switch kw {
	case "pattern":
		return "pattern is not in the publishing subset: regex dialects differ and a slow regex could freeze every member's app (02 §6.2)"
	case "format":
		return "format is not in the publishing subset (02 §6.2); annotate with an x-… keyword instead"
	case "$schema":
		return "$schema is not part of the subset (02 §6.2)"
	}
	return strconv.Quote(kw) + " is not a keyword of the publishing subset (02 §6.2)"
}

func (c *compiler) types(s *Schema, v any, path string) {
	switch x := v.(type) {
	case string:
		t, ok := typeOf(x)
		if !ok {
			c.fail(path, "type "+strconv.Quote(x)+" is not one of object, array, string, number, integer, boolean, null (02 §6.2)")
			return
		}
		s.Types = t
	case []any:
		if len(x) == 0 {
			c.fail(path, "type is one type or a non-empty list of types (02 §6.2)")
			return
		}
		var all Types
		for i, e := range x {
			name, _ := e.(string)
			t, ok := typeOf(name)
			if !ok {
				c.fail(index(path, i), "each type is one of object, array, string, number, integer, boolean, null (02 §6.2)")
				continue
			}
			all |= t
		}
		s.Types = all
	default:
		c.fail(path, "type is a string or a non-empty list of strings, got "+jsonType(v)+" (02 §6.2)")
	}
}

func (c *compiler) oneOf(s *Schema, v any, path string) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		c.fail(path, "oneOf is a non-empty list of labelled choices {const, title?, description?} (02 §6.2)")
		return
	}
	if len(arr) > MaxEnum {
		c.rs.add(CodeDefBound, path, "oneOf lists at most "+strconv.Itoa(MaxEnum)+" choices (this implementation's bound), got "+strconv.Itoa(len(arr)))
		return
	}
	choices := make([]Choice, 0, len(arr))
	for i, e := range arr {
		p := index(path, i)
		o, ok := e.(*canonical.Object)
		if !ok {
			c.fail(p, "a oneOf choice is an object {const, title?, description?}: labelled choices only, not general composition (02 §6.2)")
			continue
		}
		var ch Choice
		hasConst, good := false, true
		for _, m := range o.Members {
			switch m.Name {
			case "const":
				b, err := canonical.Marshal(m.Value)
				if err != nil {
					c.fail(member(p, "const"), "const has no canonical form: "+err.Error())
					good = false
					continue
				}
				ch.Const, ch.canon, hasConst = m.Value, string(b), true
			case "title", "description":
				str, ok := m.Value.(string)
				if !ok {
					c.fail(member(p, m.Name), m.Name+" of a choice is a string, got "+jsonType(m.Value)+" (02 §6.2)")
					good = false
					continue
				}
				if m.Name == "title" {
					ch.Title = str
				} else {
					ch.Description = str
				}
			default:
				c.fail(member(p, m.Name), "a oneOf choice has only const, title and description: labelled choices only, not general composition (02 §6.2)")
				good = false
			}
		}
		if !hasConst {
			c.fail(p, "a oneOf choice names its value in const (02 §6.2)")
			continue
		}
		if good {
			choices = append(choices, ch)
		}
	}
	if len(choices) > 0 {
		s.OneOf = choices
	}
}

func (c *compiler) choicesFrom(s *Schema, v any, path string) {
	o, ok := v.(*canonical.Object)
	if !ok || o.Len() != 2 {
		c.fail(path, "x-choicesFrom is an object {rel, field} (02 §6.2)")
		return
	}
	rel, ok1 := o.Get("rel")
	field, ok2 := o.Get("field")
	r, ok3 := rel.(string)
	f, ok4 := field.(string)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		c.fail(path, "x-choicesFrom is an object {rel, field} of two strings (02 §6.2)")
		return
	}
	if !record.ValidRel(r) {
		c.fail(member(path, "rel"), "x-choicesFrom.rel is a link role, ^[a-z][a-zA-Z0-9]{0,63}$ (02 §5.1, §6.2)")
		return
	}
	if f == "" {
		c.fail(member(path, "field"), "x-choicesFrom.field is a non-empty field name (02 §6.2)")
		return
	}
	s.ChoicesFrom = &ChoicesFrom{Rel: r, Field: f}
}
