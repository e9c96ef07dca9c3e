package canonical

import (
	"encoding/json"
	"strings"
	"testing"
)

// encoding/json writes an Object as the JSON it is, in canonical form,
// wherever it sits in a Go value (a result printed, a list of entries).
func TestObjectMarshalsAsJSON(t *testing.T) {
	o := NewObject("root", "did:key:z", "founder", true, "roles", []any{"writer"})
	b, err := json.Marshal(map[string]any{"members": []any{o}, "one": o})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"members":[{"founder":true,"roles":["writer"],"root":"did:key:z"}],"one":{"founder":true,"roles":["writer"],"root":"did:key:z"}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

// A value read holds no room it does not use: every object's members and
// every array's elements are exactly as many as it has, however they
// nest. A version naming 64 files is 65 objects; room for eight members
// each made it hold 5.7 times its bytes.
func TestParseHoldsNoSpareRoom(t *testing.T) {
	var files []string
	for i := range 65 {
		files = append(files, `{"hash":"b`+strings.Repeat(string(rune('a'+i%26)), 52)+`","size":4096}`)
	}
	in := `{"id":"x","body":{"a":[1,2,3],"b":{},"c":[],"d":{"e":[{"f":1}]}},"files":[` + strings.Join(files, ",") +
		`],"links":[{"rel":"about","to":"k"}],"n":1,"o":2,"p":3,"q":4,"r":5,"s":6,"t":7,"u":8,"v":9,"w":10,"x":11,"y":12,"z":13}`
	v, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	objects, arrays := 0, 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case *Object:
			objects++
			if cap(v.Members) != len(v.Members) {
				t.Errorf("an object of %d members holds room for %d", len(v.Members), cap(v.Members))
			}
			for _, m := range v.Members {
				walk(m.Value)
			}
		case []any:
			arrays++
			if cap(v) != len(v) {
				t.Errorf("an array of %d elements holds room for %d", len(v), cap(v))
			}
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	if objects != 71 || arrays != 5 {
		t.Fatalf("walked %d objects and %d arrays; the input has 71 and 5", objects, arrays)
	}
	// And it is the value read: written and read again, the same.
	out, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(out)
	if err != nil || !Equal(v, again) {
		t.Fatalf("written back and read again: %v, equal %v", err, Equal(v, again))
	}
}
