package canonical

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

type specVectors struct {
	Canonical struct {
		Input     string `json:"input"`
		Canonical string `json:"canonical"`
	} `json:"canonical_02_1"`
	Version struct {
		Version             json.RawMessage `json:"version"`
		SignedPartCanonical string          `json:"signed_part_canonical"`
		BodyCanonical       string          `json:"body_canonical"`
	} `json:"version_02_3_4"`
}

func loadVectors(t *testing.T) specVectors {
	t.Helper()
	b, err := os.ReadFile("../testdata/spec-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v specVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func canon(t *testing.T, in string) string {
	t.Helper()
	v, err := Parse([]byte(in))
	if err != nil {
		t.Fatalf("Parse(%q): %v", in, err)
	}
	out, err := Marshal(v)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return string(out)
}

// 02 §1's example.
func TestSpecExample(t *testing.T) {
	v := loadVectors(t)
	if got := canon(t, v.Canonical.Input); got != v.Canonical.Canonical {
		t.Fatalf("canonical form\n got %s\nwant %s", got, v.Canonical.Canonical)
	}
}

// 02 §2: the id of the §3.4 version's signed part, and its bodyHash.
func TestSpecIDs(t *testing.T) {
	v := loadVectors(t)
	if got := IDOf([]byte(v.Version.SignedPartCanonical)).String(); got != "bvtkn4kg5z6qhfqvovhxypxvm767aqz6llyd67wztupdwixpfl7xa" {
		t.Fatalf("id of the signed part = %s", got)
	}
	if got := IDOf([]byte(v.Version.BodyCanonical)).String(); got != "b47jrvlapsxwsx44hipgsfbwdbupytsv4giuf4hxgoj33hiq4oubq" {
		t.Fatalf("bodyHash = %s", got)
	}
	id, err := ContentID(mustParse(t, `{"text": "Buy milk", "done": false}`))
	if err != nil || id.String() != "b47jrvlapsxwsx44hipgsfbwdbupytsv4giuf4hxgoj33hiq4oubq" {
		t.Fatalf("ContentID(body) = %s, %v", id, err)
	}
}

func mustParse(t *testing.T, s string) any {
	t.Helper()
	v, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return v
}

// Numbers against forms an ECMAScript engine wrote (testdata/numbers.golden:
// the binary64 bits, then JSON.stringify of that value).
func TestNumbersMatchECMAScript(t *testing.T) {
	f, err := os.Open("testdata/numbers.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		bitsHex, want, _ := strings.Cut(sc.Text(), " ")
		raw, err := hex.DecodeString(bitsHex)
		if err != nil || len(raw) != 8 {
			t.Fatalf("bad golden line %q", sc.Text())
		}
		x := math.Float64frombits(binary.BigEndian.Uint64(raw))
		got, err := AppendNumber(nil, x)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%v (%s): got %s, want %s", x, bitsHex, got, want)
		}
		// Reading the form back gives the same binary64 (negative zero
		// aside, which 02 §1 writes as 0).
		back, err := Parse(got)
		if err != nil {
			t.Fatalf("Parse(%s): %v", got, err)
		}
		if back.(float64) != x {
			t.Errorf("%s reads back as %v, want %v", got, back, x)
		}
		n++
	}
	if n < 1000 {
		t.Fatalf("only %d golden numbers", n)
	}
}

// Objects with names and strings of every kind of code unit, against the
// canonical forms an ECMAScript engine wrote (testdata/strings.golden).
func TestStringsAndOrderMatchECMAScript(t *testing.T) {
	f, err := os.Open("testdata/strings.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var pair [2]string
		if err := json.Unmarshal(sc.Bytes(), &pair); err != nil {
			t.Fatal(err)
		}
		// encoding/json turned lone surrogates in the golden line into
		// U+FFFD, so read the pair with our own parser instead.
		v := mustParse(t, sc.Text())
		in, want := v.([]any)[0].(string), v.([]any)[1].(string)
		if got := canon(t, in); got != want {
			t.Errorf("input %q\n got %q\nwant %q", in, got, want)
		}
		n++
	}
	if n < 1000 {
		t.Fatalf("only %d golden objects", n)
	}
}

func TestNumberForms(t *testing.T) {
	cases := map[string]string{
		"1.0": "1", "1e0": "1", "-0": "0", "-0.0": "0", "1E2": "100", "0.1": "0.1",
		"1e21": "1e+21", "1.5e21": "1.5e+21", "123456789012345678901234": "1.2345678901234569e+23",
		"1e-7": "1e-7", "0.000001": "0.000001", "1e-400": "0", "-1e-400": "0",
		"100000000000000000000": "100000000000000000000", "9007199254740993": "9007199254740992",
		"5e-324": "5e-324", "1.7976931348623157e308": "1.7976931348623157e+308",
	}
	for in, want := range cases {
		if got := canon(t, in); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

func TestStringForms(t *testing.T) {
	cases := map[string]string{
		`"\u0008\u0009\u000a\u000c\u000d"`: `"\b\t\n\f\r"`,
		`"\u0001\u001F\u007f"`:             "\"\\u0001\\u001f\x7f\"",
		`"\/"`:                             `"/"`,
		`"\u2028\u2029"`:                   "\"\u2028\u2029\"",
		`"\uD83D\uDE00"`:                   "\"😀\"",
		`"\uDE00\uD83D"`:                   `"\ude00\ud83d"`,
		`"\uD83Dx"`:                        `"\ud83dx"`,
		`"\uD83D\u0041"`:                   `"\ud83dA"`,
		`"\uD83D\uD83D\uDE00"`:             "\"\\ud83d😀\"",
		`"é"`:                              `"é"`,
	}
	for in, want := range cases {
		if got := canon(t, in); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

func TestOrderByUTF16(t *testing.T) {
	// U+FF61 is above the surrogates in UTF-16 but below U+10000 in code
	// points; UTF-16 puts the astral character first.
	got := canon(t, `{"｡":1,"😀":2,"a":3,"":4,"aa":5,"B":6}`)
	want := `{"":4,"B":6,"a":3,"aa":5,"😀":2,"｡":1}`
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestRefusals(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	okDeep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Parse([]byte(okDeep)); err != nil {
		t.Fatalf("depth %d refused: %v", MaxDepth, err)
	}
	cases := []struct{ in, code string }{
		{"", CodeSyntax}, {" ", CodeSyntax}, {"{", CodeSyntax}, {"[1,]", CodeSyntax}, {`{"a":1,}`, CodeSyntax},
		{"01", CodeSyntax}, {"1.", CodeSyntax}, {".5", CodeSyntax}, {"+1", CodeSyntax}, {"1e", CodeSyntax},
		{"NaN", CodeSyntax}, {"Infinity", CodeSyntax}, {"tru", CodeSyntax}, {"nul", CodeSyntax},
		{`"a`, CodeSyntax}, {"\"\x01\"", CodeSyntax}, {`"\x"`, CodeSyntax}, {`"\u12"`, CodeSyntax},
		{"1 2", CodeSyntax}, {"\ufeff1", CodeSyntax}, {"{'a':1}", CodeSyntax}, {"[1]x", CodeSyntax},
		{"1e400", CodeNumber}, {"-1e309", CodeNumber},
		{`{"a":1,"a":2}`, CodeDuplicate}, {`{"a":{"b":1,"b":1}}`, CodeDuplicate},
		{"\"\xff\"", CodeUTF8}, {"\"\xed\xa0\x80\"", CodeUTF8}, {"\"\xc3\"", CodeUTF8},
		{deep, CodeDepth},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.in))
		var e *Error
		if !errors.As(err, &e) || e.Code != c.code {
			t.Errorf("Parse(%.40q) = %v, want code %s", c.in, err, c.code)
		}
	}
	// Many members: the map path of the duplicate check.
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 40; i++ {
		b.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1,`)
	}
	b.WriteString(`"kaa":2}`)
	if _, err := Parse([]byte(b.String())); err == nil || err.(*Error).Code != CodeDuplicate {
		t.Fatalf("duplicate among 41 members: %v", err)
	}
}

func TestAppendRefusesOutsideTheModel(t *testing.T) {
	// "\xed\xa0\xbd\xed\xb8\x80" is U+D83D U+DE00 as two 3-byte surrogates:
	// not WTF-8 (the pair is 😀's 4 bytes), and it would read back as 😀.
	for _, v := range []any{math.NaN(), math.Inf(1), "\xff", "\xed\xa0\xbd\xed\xb8\x80", struct{}{}, map[string]any{}} {
		if _, err := Marshal(v); err == nil {
			t.Errorf("Marshal(%#v) succeeded", v)
		}
	}
	o := &Object{Members: []Member{{"a", 1.0}, {"a", 2.0}}}
	if _, err := Marshal(o); err == nil {
		t.Error("an object built with two members of one name was written")
	}
}

func TestIDs(t *testing.T) {
	const good = "bvtkn4kg5z6qhfqvovhxypxvm767aqz6llyd67wztupdwixpfl7xa"
	id, err := ParseID(good)
	if err != nil || id.String() != good {
		t.Fatalf("round trip: %s, %v", id, err)
	}
	if up, err := ParseID("b" + strings.ToUpper(good[1:])); err != nil || up != id {
		t.Fatalf("upper case: %v", err)
	}
	bad := []string{
		"", good[:52], good + "a", "B" + good[1:], "c" + good[1:],
		good[:52] + "b", // last character carries padding bits (b = 1 → low bits set)
		good[:10] + "1" + good[11:], good[:10] + "8" + good[11:], good[:10] + "=" + good[11:],
	}
	for _, s := range bad {
		if _, err := ParseID(s); err == nil {
			t.Errorf("ParseID(%q) accepted", s)
		}
	}
}

func TestIDCompareIsTextOrder(t *testing.T) {
	var ids []ID
	for i := 0; i < 300; i++ {
		ids = append(ids, IDOf([]byte{byte(i), byte(i >> 8)}))
	}
	ids = append(ids, ID{}, ID{0xff, 0xff}, ID{0xd6}, ID{0xd0})
	for _, a := range ids {
		for _, b := range ids[:60] {
			want := strings.Compare(a.String(), b.String())
			if got := a.Compare(b); got != want {
				t.Fatalf("Compare(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func TestCompareUTF16(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "b", -1}, {"b", "a", 1}, {"a", "ab", -1},
		{"\uffff", "😀", 1}, {"😀", "\ue000", -1}, {"😀", "😁", -1},
		{"\xed\xa0\x80", "😀", -1}, // lone U+D800 before the pair D83D DE00
		{"\xed\xb8\x80", "😀", 1},  // lone U+DE00 after it
		{"\xed\xa0\xbd", "😀", -1}, // lone U+D83D vs D83D DE00: the prefix first
	}
	for _, c := range cases {
		if got := CompareUTF16(c.a, c.b); got != c.want {
			t.Errorf("CompareUTF16(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestUTF16Len(t *testing.T) {
	cases := []struct {
		s    string
		want int
	}{
		{"", 0}, {"abc", 3}, {"é", 1}, {"€", 1}, {"😀", 2}, {"a😀b", 4},
		{"\xed\xa0\x80", 1},             // a lone U+D800, as the reader keeps it
		{"\xed\xa0\xbd\xed\xb8\x80", 2}, // two lone surrogates
	}
	for _, c := range cases {
		if got := UTF16Len(c.s); got != c.want {
			t.Errorf("UTF16Len(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}

func TestEqual(t *testing.T) {
	eq := [][2]string{{`0`, `-0`}, {`1`, `1.0`}, {`{"a":[1,{"b":null}],"c":"x"}`, `{"c":"x","a":[1,{"b":null}]}`}, {`"\ud800"`, `"\ud800"`}}
	for _, p := range eq {
		if !Equal(mustParse(t, p[0]), mustParse(t, p[1])) {
			t.Errorf("%s != %s", p[0], p[1])
		}
	}
	ne := [][2]string{{`0`, `false`}, {`null`, `false`}, {`[1]`, `[1,1]`}, {`{"a":1}`, `{"a":1,"b":1}`}, {`{"a":1}`, `{"b":1}`}, {`"a"`, `"A"`}}
	for _, p := range ne {
		if Equal(mustParse(t, p[0]), mustParse(t, p[1])) {
			t.Errorf("%s == %s", p[0], p[1])
		}
	}
	// A big object goes through the map path.
	big := `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}`
	bigRev := `{"j":10,"i":9,"h":8,"g":7,"f":6,"e":5,"d":4,"c":3,"b":2,"a":1}`
	if !Equal(mustParse(t, big), mustParse(t, bigRev)) {
		t.Error("big objects in other orders differ")
	}
	if Equal(mustParse(t, big), mustParse(t, strings.Replace(bigRev, "10", "11", 1))) {
		t.Error("big objects with another value are equal")
	}
}

func TestCompare(t *testing.T) {
	cases := []struct {
		a, b any
		want int
		ok   bool
	}{
		{1.0, 2.0, -1, true}, {2.0, 1.0, 1, true}, {0.0, math.Copysign(0, -1), 0, true},
		{"a", "b", -1, true}, {"b", "a", 1, true}, {"é", "z", 1, true}, {"x", "x", 0, true},
		{1.0, "1", 0, false}, {nil, nil, 0, false}, {true, false, 0, false}, {[]any{}, []any{}, 0, false},
	}
	for _, c := range cases {
		if got, ok := Compare(c.a, c.b); got != c.want || ok != c.ok {
			t.Errorf("Compare(%#v, %#v) = %d, %v; want %d, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
}
