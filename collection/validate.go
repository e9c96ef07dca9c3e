package collection

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/minca-go/minca/canonical"
)

// Validate checks a body against the schema as a reader does (02 §6.2,
// §9.6) and returns what does not fit, with JSON paths into the body
// starting at "$"; nil when it fits. It is a reader's flag, never a reason
// to refuse a version. Annotations (x-…) say nothing about fit. At most
// [MaxIssues] issues are listed, then one of [CodeSchemaMore].
//
// The time taken is linear in the body's size times the schema's depth;
// enum and const compare canonical forms (02 §1), so 1 and 1.0 are equal
// and an object's member order does not matter.
func (s *Schema) Validate(body any) []Issue {
	is := issues{moreCode: CodeSchemaMore}
	budget := MaxValidateSteps
	s.validate(body, "$", &is, &budget)
	return is.result()
}

// MaxValidateSteps bounds the work of one [Schema.Validate]: a step is a
// value checked against a schema, a required name looked for, or an
// object's member looked at. Past it,
// validation stops and one more issue, [CodeSchemaMore], says so. A schema
// and a body that are each linear to read can otherwise ask for their
// product (an items schema with many required names over many objects).
const MaxValidateSteps = 1 << 22

func (s *Schema) validate(v any, path string, is *issues, budget *int) {
	if s == nil {
		return
	}
	if *budget--; *budget < 0 {
		is.stop()
		return
	}
	if s.Types != 0 && !s.Types.match(v) {
		is.add(CodeSchemaType, path, "is "+jsonType(v)+", the schema's type is "+s.Types.String())
	}
	if s.HasEnum || s.HasConst || s.OneOf != nil {
		s.checkValues(v, path, is)
	}
	switch x := v.(type) {
	case float64:
		if s.Minimum != nil && x < *s.Minimum {
			is.add(CodeSchemaMinimum, path, num(x)+" is less than the minimum "+num(*s.Minimum))
		}
		if s.Maximum != nil && x > *s.Maximum {
			is.add(CodeSchemaMaximum, path, num(x)+" is more than the maximum "+num(*s.Maximum))
		}
	case string:
		if s.MinLength != nil || s.MaxLength != nil {
			n := float64(codePoints(x))
			if s.MinLength != nil && n < *s.MinLength {
				is.add(CodeSchemaMinLength, path, "is "+num(n)+" characters, fewer than minLength "+num(*s.MinLength))
			}
			if s.MaxLength != nil && n > *s.MaxLength {
				is.add(CodeSchemaMaxLength, path, "is "+num(n)+" characters, more than maxLength "+num(*s.MaxLength))
			}
		}
	case []any:
		n := float64(len(x))
		if s.MinItems != nil && n < *s.MinItems {
			is.add(CodeSchemaMinItems, path, "has "+num(n)+" items, fewer than minItems "+num(*s.MinItems))
		}
		if s.MaxItems != nil && n > *s.MaxItems {
			is.add(CodeSchemaMaxItems, path, "has "+num(n)+" items, more than maxItems "+num(*s.MaxItems))
		}
		if s.Items != nil {
			for i, e := range x {
				if is.full() || *budget < 0 {
					is.stop() // the rest are not walked: enough is listed, or done
					return
				}
				s.Items.validate(e, index(path, i), is, budget)
			}
		}
	case *canonical.Object:
		if *budget -= len(s.Required) + x.Len(); *budget < 0 {
			is.stop()
			return
		}
		has := x.Has
		if len(s.Required) > 8 && x.Len() > 8 {
			names := make(map[string]struct{}, x.Len())
			for _, m := range x.Members {
				names[m.Name] = struct{}{}
			}
			has = func(n string) bool { _, ok := names[n]; return ok }
		}
		for _, name := range s.Required {
			if !has(name) {
				is.add(CodeSchemaRequired, member(path, name), "required member "+strconv.Quote(name)+" is missing")
			}
		}
		if len(s.Properties) == 0 && s.AdditionalProperties == nil {
			return
		}
		for _, m := range x.Members {
			if is.full() || *budget < 0 {
				is.stop()
				return
			}
			sub, ok := s.Property(m.Name)
			switch {
			case ok:
				sub.validate(m.Value, member(path, m.Name), is, budget)
			case s.AdditionalProperties != nil && !*s.AdditionalProperties:
				is.add(CodeSchemaAdditional, member(path, m.Name), "member "+strconv.Quote(m.Name)+" is not among the schema's properties, and additionalProperties is false")
			}
		}
	}
}

// checkValues applies enum, const and oneOf, which compare canonical forms.
func (s *Schema) checkValues(v any, path string, is *issues) {
	b, err := canonical.Marshal(v)
	if err != nil {
		is.add(CodeSchemaConst, path, "has no canonical form: "+err.Error())
		return
	}
	canon := string(b)
	if s.HasEnum && !s.inEnum(canon) {
		is.add(CodeSchemaEnum, path, "is not one of the schema's enum values")
	}
	if s.HasConst && canon != s.constOf() {
		is.add(CodeSchemaConst, path, "is not the schema's const value")
	}
	if s.OneOf != nil {
		n := 0
		for i := range s.OneOf {
			if s.OneOf[i].canonical() == canon {
				n++
			}
		}
		if n != 1 {
			is.add(CodeSchemaOneOf, path, "matches "+strconv.Itoa(n)+" of the schema's oneOf choices, not exactly one")
		}
	}
}

// The canonical forms are computed at parse; a Schema built by hand has
// none, so they are computed here instead.
func (s *Schema) inEnum(canon string) bool {
	if s.enumSet != nil {
		_, ok := s.enumSet[canon]
		return ok
	}
	for _, e := range s.Enum {
		if b, err := canonical.Marshal(e); err == nil && string(b) == canon {
			return true
		}
	}
	return false
}

func (s *Schema) constOf() string {
	if s.constCanon != "" {
		return s.constCanon
	}
	b, _ := canonical.Marshal(s.Const)
	return string(b)
}

func (c *Choice) canonical() string {
	if c.canon != "" {
		return c.canon
	}
	b, _ := canonical.Marshal(c.Const)
	return string(b)
}

// match reports whether v is of one of the types; an integer is a number
// with no fractional part (JSON Schema 2020-12), so 1.0 is one.
func (t Types) match(v any) bool {
	switch x := v.(type) {
	case nil:
		return t&TypeNull != 0
	case bool:
		return t&TypeBoolean != 0
	case float64:
		return t&TypeNumber != 0 || t&TypeInteger != 0 && x == math.Trunc(x)
	case string:
		return t&TypeString != 0
	case []any:
		return t&TypeArray != 0
	case *canonical.Object:
		return t&TypeObject != 0
	}
	return false
}

// codePoints counts a WTF-8 string's code points, as JSON Schema counts
// length; a lone surrogate (three bytes in WTF-8) counts as one.
func codePoints(s string) int {
	n := 0
	for i := 0; i < len(s); n++ {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		if size == 1 && i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
			size = 3
		}
		i += size
	}
	return n
}

func num(f float64) string {
	b, err := canonical.AppendNumber(nil, f)
	if err != nil {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return string(b)
}
