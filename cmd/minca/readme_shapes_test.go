package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// lineMatches compares a line a command printed with the line the
// documentation shows. A JSON line is compared member by member: the
// same members (a bare … among them: and more), each value the same,
// "…" within a string standing for any run of characters and a string
// "…" for any value. Any other line is compared as text, … as any run.
func lineMatches(want, got string) bool {
	if strings.HasPrefix(want, "{") || strings.HasPrefix(want, "[") {
		w, err := parseShown(want)
		if err != nil {
			return false
		}
		dec := json.NewDecoder(strings.NewReader(got))
		dec.UseNumber()
		var g any
		if dec.Decode(&g) != nil || dec.More() {
			return false
		}
		return shownMatches(w, g)
	}
	return linePattern(want).MatchString(got)
}

// parseShown reads a JSON line as documentation shows it: a bare …
// (outside a string) becomes a member "…" in an object, an element "…" in
// a list.
func parseShown(s string) (any, error) {
	var b strings.Builder
	var stack []byte
	inString, escaped := false, false
	var last rune // the last rune written outside a string, spaces aside
	for _, r := range s {
		if inString {
			b.WriteRune(r)
			switch {
			case escaped:
				escaped = false
			case r == '\\':
				escaped = true
			case r == '"':
				inString = false
				last = r
			}
			continue
		}
		switch r {
		case '"':
			inString = true
		case '{', '[':
			stack = append(stack, byte(r))
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case '…':
			// A member where a member goes, a value where a value does.
			if len(stack) > 0 && stack[len(stack)-1] == '{' && last != ':' {
				b.WriteString(`"…":"…"`)
			} else {
				b.WriteString(`"…"`)
			}
			last = '"'
			continue
		}
		b.WriteRune(r)
		if r != ' ' {
			last = r
		}
	}
	dec := json.NewDecoder(strings.NewReader(b.String()))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func shownMatches(want, got any) bool {
	switch w := want.(type) {
	case string:
		if w == "…" {
			return true
		}
		g, ok := got.(string)
		return ok && linePattern(w).MatchString(g)
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		_, more := w["…"]
		for k, wv := range w {
			if k == "…" {
				continue
			}
			gv, ok := g[k]
			if !ok || !shownMatches(wv, gv) {
				return false
			}
		}
		return more || len(g) == len(w)
	case []any:
		g, ok := got.([]any)
		if !ok {
			return false
		}
		if i := slices.Index(w, any("…")); i >= 0 {
			if len(g) < i {
				return false
			}
			for k := range i {
				if !shownMatches(w[k], g[k]) {
					return false
				}
			}
			return true
		}
		if len(g) != len(w) {
			return false
		}
		for k := range w {
			if !shownMatches(w[k], g[k]) {
				return false
			}
		}
		return true
	default:
		return fmt.Sprint(want) == fmt.Sprint(got)
	}
}

// outputShape is one documented shape of a verb's JSON line: the members
// it always has, and those it may have.
type outputShape struct {
	required, optional map[string]bool
	any                bool // any JSON (canon)
	text               bool // a line of text
}

func (sh outputShape) String() string {
	var ms []string
	for m := range sh.required {
		ms = append(ms, strconv.Quote(m))
	}
	for m := range sh.optional {
		ms = append(ms, strconv.Quote(m)+"?")
	}
	sort.Strings(ms)
	return "{" + strings.Join(ms, ",") + "}"
}

// fits reports whether a line a verb printed has the shape.
func (sh outputShape) fits(line string) bool {
	switch {
	case sh.any:
		return json.Valid([]byte(line))
	case sh.text:
		return !strings.HasPrefix(line, "{")
	}
	var o map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &o) != nil {
		return false
	}
	for m := range sh.required {
		if _, ok := o[m]; !ok {
			return false
		}
	}
	for m := range o {
		if !sh.required[m] && !sh.optional[m] {
			return false
		}
	}
	return true
}

var shapeRe = regexp.MustCompile("`(\\{\"[^`]*\\})`")

// documentedShapes reads docs/cli.md's table "What each verb prints": each
// verb's shapes.
func documentedShapes(t *testing.T) map[string][]outputShape {
	t.Helper()
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "### What each verb prints")
	if !ok {
		t.Fatal("docs/cli.md has no table of what each verb prints")
	}
	parse := func(s string) outputShape {
		sh := outputShape{required: map[string]bool{}, optional: map[string]bool{}}
		for _, m := range strings.Split(strings.Trim(s, "{}"), ",") {
			if name, opt := strings.CutSuffix(m, "?"); opt {
				sh.optional[strings.Trim(name, `"`)] = true
			} else {
				sh.required[strings.Trim(m, `"`)] = true
			}
		}
		return sh
	}
	var version []outputShape
	out := map[string][]outputShape{}
	for _, l := range strings.Split(table, "\n") {
		if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| verb") || strings.HasPrefix(l, "| ---") {
			if len(out) > 0 && !strings.HasPrefix(l, "|") {
				break
			}
			continue
		}
		cells := strings.Split(l, " | ")
		if len(cells) < 2 {
			continue
		}
		var shapes []outputShape
		for _, m := range shapeRe.FindAllStringSubmatch(cells[1], -1) {
			shapes = append(shapes, parse(m[1]))
		}
		switch {
		case strings.Contains(cells[1], "a version"):
			shapes = append(shapes, version...)
		case strings.Contains(cells[1], "a line of text"):
			shapes = append(shapes, outputShape{text: true})
		case strings.Contains(cells[1], "any JSON"):
			shapes = append(shapes, outputShape{any: true})
		}
		if strings.TrimPrefix(cells[0], "| ") == "a version" {
			version = shapes
			continue
		}
		for _, v := range regexp.MustCompile("`([a-z -]+)`").FindAllStringSubmatch(cells[0], -1) {
			out[v[1]] = shapes
		}
	}
	if len(version) == 0 || len(out) < 30 {
		t.Fatalf("docs/cli.md's table of what each verb prints: %d verbs, a version %v", len(out), version)
	}
	return out
}

// checkCalls checks every JSON line each recorded `minca` call printed
// (recordCalls) against the shape docs/cli.md documents for its verb.
func checkCalls(t *testing.T, dir, doc string) {
	t.Helper()
	shapes := documentedShapes(t)
	args, _ := filepath.Glob(filepath.Join(dir, "call-*.args"))
	if len(args) == 0 {
		t.Fatalf("%s ran no minca", doc)
	}
	checked := map[string]int{}
	for _, a := range args {
		var argv []string
		if b, err := os.ReadFile(a); err != nil || json.Unmarshal(b, &argv) != nil {
			t.Fatalf("%s: %v", a, err)
		}
		out, _ := os.ReadFile(strings.TrimSuffix(a, ".args") + ".out")
		verb := calledVerb(argv)
		if verb == "" || slices.Contains(argv, "--help") || slices.Contains(argv, "-h") || len(out) == 0 {
			continue
		}
		alts, ok := shapes[verb]
		if !ok {
			t.Errorf("%s runs minca %s, which prints\n%s\nbut docs/cli.md documents no shape for %s", doc, strings.Join(argv, " "), tail(string(out), 500), verb)
			continue
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			fits := false
			for _, sh := range alts {
				fits = fits || sh.fits(line)
			}
			if !fits {
				t.Errorf("%s: minca %s printed\n  %s\nnot the shape docs/cli.md documents: %v", doc, strings.Join(argv, " "), line, alts)
			}
			checked[verb]++
		}
	}
	t.Logf("%s: JSON lines checked against their documented shapes, by verb: %v", doc, checked)
}

// calledVerb is the verb (and subverb) of a call's arguments: "space
// members".
func calledVerb(argv []string) string {
	for len(argv) > 0 && strings.HasPrefix(argv[0], "--log-format") {
		if argv[0] == "--log-format" {
			argv = argv[1:]
		}
		argv = argv[1:]
	}
	if len(argv) == 0 {
		return ""
	}
	for _, v := range verbs() {
		if v.name == argv[0] {
			return fullName(v, argv[1:])
		}
	}
	return argv[0]
}

// The comparison of a printed line with the one documentation shows:
// member by member, so a member missing, one added or one renamed (a Go
// struct's field names printed for a value) is caught.
func TestLineMatches(t *testing.T) {
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{`{"founder":true,"roles":[],"root":"did:key:zDnae…"}`, `{"founder":true,"roles":[],"root":"did:key:zDnaeXYZ"}`, true},
		{`{"founder":true,"roles":[],"root":"did:key:zDnae…"}`, `{"roles":[],"founder":true,"root":"did:key:zDnaeXYZ"}`, true},
		{`{"founder":true,"roles":[],"root":"did:key:zDnae…"}`, `{"Members":[{"Name":"root","Value":"did:key:zDnaeXYZ"}]}`, false},
		{`{"founder":true,"roles":[],"root":"did:key:zDnae…"}`, `{"founder":true,"roles":[],"root":"did:key:zDnaeX","extra":1}`, false},
		{`{"founder":true,"roles":[],"root":"did:key:zDnae…"}`, `{"founder":true,"root":"did:key:zDnaeX"}`, false},
		{`{"founder":true,"roles":[],"root":"did:key:zDnae…"}`, `{"founder":false,"roles":[],"root":"did:key:zDnaeX"}`, false},
		{`{"founder":true,"roles":[],"root":"did:key:zDnae…"}`, `{"founder":true,"roles":[],"root":"did:web:x"}`, false},
		{`{"a":1,…}`, `{"a":1,"b":2}`, true},
		{`{"a":1,…}`, `{"b":2}`, false},
		{`{"a":…,"b":"x"}`, `{"a":{"deep":[1]},"b":"x"}`, true},
		{`{"a":…,"b":"x"}`, `{"b":"x"}`, false},
		{`{"v":{…,"seq":1,…}}`, `{"v":{"id":"b","seq":1}}`, true},
		{`{"v":{…,"seq":1,…}}`, `{"v":{"id":"b","seq":0}}`, false},
		{`["segments/…"]`, `["segments/w/1-x.seg"]`, true},
		{`["segments/…"]`, `["segments/a","segments/b"]`, false},
		{`["a",…]`, `["a","b","c"]`, true},
		{`{"n":0}`, `{"n":0.0}`, false},
		{`{"n":0}`, `not json`, false},
		{`Dear reader`, `Dear reader`, true},
		{`Dear …`, `Dear diary`, true},
		{`0`, `1`, false},
	} {
		if got := lineMatches(c.want, c.got); got != c.ok {
			t.Errorf("lineMatches(%s, %s) = %v", c.want, c.got, got)
		}
	}
	// A shape documented for a verb: required and optional members.
	sh := outputShape{required: map[string]bool{"root": true, "founder": true, "roles": true}, optional: map[string]bool{}}
	for line, ok := range map[string]bool{
		`{"founder":true,"roles":[],"root":"x"}`:              true,
		`{"Members":[]}`:                                      false,
		`{"founder":true,"roles":[]}`:                         false,
		`{"founder":true,"roles":[],"root":"x","member":"x"}`: false,
	} {
		if sh.fits(line) != ok {
			t.Errorf("%v fits %s: %v", sh, line, !ok)
		}
	}
}
