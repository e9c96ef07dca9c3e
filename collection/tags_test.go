package collection

import (
	"slices"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// 02 §8.1: the values of a field path and of a link role.
func TestTopicValues(t *testing.T) {
	body := parse(t, `{"channel":"design","n":2,"ok":true,"nothing":null,"mentions":["a",1,false,null,{"x":1},["y"],"a"],
		"meta":{"place":{"city":"Oslo","tags":["t"]},"list":[{"city":"no"}]},"obj":{"a":1}}`)
	c := Content{Body: body, Links: []record.Link{{Rel: "in", To: "k.one"}, {Rel: "about", To: "k.x"}, {Rel: "in", To: "k.two"}}}
	for _, tc := range []struct {
		topic string
		want  string
	}{
		{"channel", `["design"]`},
		{"n", `[2]`},
		{"ok", `[true]`},
		{"nothing", `null`},
		{"missing", `null`},
		{"obj", `null`},
		{"mentions", `["a",1,false,"a"]`},
		{"meta.place.city", `["Oslo"]`},
		{"meta.place.tags", `["t"]`},
		{"meta.list.city", `null`},
		{"channel.x", `null`},
		{"link:in", `["k.one","k.two"]`},
		{"link:none", `null`},
	} {
		topic, ok := ParseTopic(tc.topic)
		if !ok {
			t.Fatalf("topic %s", tc.topic)
		}
		got := topic.Values(c)
		var v any = []any(got)
		if got == nil {
			v = nil
		}
		b, _ := canonical.Marshal(v)
		if string(b) != tc.want {
			t.Errorf("%s: %s, want %s", tc.topic, b, tc.want)
		}
	}
}

// 02 §8.3: tags are each once, sorted by UTF-16 code units, the first 64.
func TestTags(t *testing.T) {
	k := PublicTagKey(testSpace)
	d := def(t, "app.chat.message", `"topics":["mentions","channel","link:in"]`)
	c := Content{Body: parse(t, `{"channel":"design","mentions":["design","bob","bob",true,"true"]}`),
		Links: []record.Link{{Rel: "in", To: "design"}}}
	tags, err := d.Tags(k, c)
	if err != nil {
		t.Fatal(err)
	}
	// design twice in two topics, design as a link, bob once, true and "true".
	if len(tags) != 6 {
		t.Fatalf("%d tags: %v", len(tags), tags)
	}
	if !slices.IsSortedFunc(tags, canonical.CompareUTF16) || len(slices.Compact(slices.Clone(tags))) != 6 {
		t.Fatalf("not sorted or not each once: %v", tags)
	}
	for _, tag := range tags {
		if len(tag) != TagLen {
			t.Fatalf("tag %q", tag)
		}
	}
	// No values: no tags.
	if tags, _ := d.Tags(k, Content{Body: parse(t, `{"text":"hi"}`)}); tags != nil {
		t.Fatal(tags)
	}
	// Truncated to the first 64 of the sorted set.
	many := make([]any, 200)
	for i := range many {
		many[i] = float64(i)
	}
	big := def(t, "app.big", `"topics":["n"]`)
	tags, _ = big.Tags(k, Content{Body: canonical.NewObject("n", many)})
	var every []string
	for _, n := range many {
		tag, _ := Tag(k, "app.big", "n", n)
		every = append(every, tag)
	}
	slices.SortFunc(every, canonical.CompareUTF16)
	if len(tags) != record.MaxTags || !slices.Equal(tags, every[:record.MaxTags]) {
		t.Fatalf("%d tags, not the first 64 of the sorted set", len(tags))
	}
	// A private space's key gives other tags.
	pk, err := PrivateTagKey(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	ptags, _ := d.Tags(pk, c)
	if slices.Equal(ptags, func() []string { x, _ := d.Tags(k, c); return x }()) {
		t.Fatal("private and public tags agree")
	}
	if _, err := PrivateTagKey(make([]byte, 16)); err == nil {
		t.Fatal("a 16-byte space key")
	}
}

func TestSameTags(t *testing.T) {
	if !SameTags([]string{"b", "a", "a"}, []string{"a", "b"}) || !SameTags(nil, []string{}) {
		t.Fatal("order and duplicates are ignored")
	}
	if SameTags([]string{"a"}, []string{"a", "b"}) || SameTags([]string{"a"}, nil) {
		t.Fatal("different sets")
	}
}

// 02 §8.4: the check.
func TestCheckTags(t *testing.T) {
	k := PublicTagKey(testSpace)
	d := def(t, "app.chat.message", `"topics":["channel"]`)
	in := Defined(d)
	tag := "Hh5Cwzt8mQlIfYWE_cPjkA"
	v := func(tags string) *record.Version {
		return ver(t, `"collection":"app.chat.message","key":"`+freshKey+`","body":{"channel":"design"}`+tags)
	}
	for _, tags := range []string{`,"tags":["` + tag + `"]`, `,"tags":["` + tag + `","` + tag + `"]`} {
		x := v(tags)
		if err := CheckTags(x, PublicContent(x), &k, in); err != nil {
			t.Fatalf("%s: %v", tags, err)
		}
	}
	for _, tags := range []string{``, `,"tags":[]`, `,"tags":["` + tag + `","AAAAAAAAAAAAAAAAAAAAAA"]`, `,"tags":["FfavMdkS1rv7FcKY9sNSoA"]`} {
		x := v(tags)
		wantRefusal(t, CheckTags(x, PublicContent(x), &k, in), CodeTagMismatch)
	}
	// No values, no tags member: fine.
	empty := ver(t, `"collection":"app.chat.message","key":"`+freshKey+`","body":{}`)
	if err := CheckTags(empty, PublicContent(empty), &k, in); err != nil {
		t.Fatal(err)
	}
	// No topics in force: any tag refused, no tag fine; no key needed.
	notopics := Defined(def(t, "app.chat.message", ""))
	x := v(`,"tags":["` + tag + `"]`)
	wantRefusal(t, CheckTags(x, PublicContent(x), nil, notopics), CodeTagMismatch)
	if err := CheckTags(v(""), PublicContent(v("")), nil, notopics); err != nil {
		t.Fatal(err)
	}
	// Not checked: a stub, no key, a delete, no definition, can't read.
	wrong := v(`,"tags":["AAAAAAAAAAAAAAAAAAAAAA"]`)
	del := ver(t, `"collection":"app.chat.message","key":"`+freshKey+`","seq":1,"deleted":true,"tags":["x"]`)
	for i, c := range []struct {
		v  *record.Version
		c  *Content
		k  *TagKey
		in InForce
	}{
		{wrong.Stub(), PublicContent(wrong.Stub()), &k, in},
		{wrong, PublicContent(wrong), nil, in},
		{del, &Content{}, &k, in},
		{wrong, PublicContent(wrong), &k, InForce{}},
		{wrong, PublicContent(wrong), &k, Unreadable()},
	} {
		if err := CheckTags(c.v, c.c, c.k, c.in); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
}
