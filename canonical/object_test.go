package canonical

import (
	"encoding/json"
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
