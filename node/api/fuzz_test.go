package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A request body comes from any local program: whatever it is, reading
// it never panics, and answers a value or an *apiError.
func FuzzReadObject(f *testing.F) {
	f.Add(`{"collection":"app.a","body":{}}`)
	f.Add(`{"collection":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`)
	f.Add(`{"a":"\"[[[["}`)
	f.Add(`[`)
	f.Fuzz(func(t *testing.T, body string) {
		s := &Server{o: Options{MaxBody: 4096, MaxDepth: 8}}
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		o, err := s.readObject(r, []string{"collection", "body"}, "collection")
		if err != nil {
			if _, ok := err.(*apiError); !ok {
				t.Fatalf("a bad body gave %T, not an *apiError", err)
			}
			return
		}
		if !o.Has("collection") || depth([]byte(body)) > 8 {
			t.Fatalf("%q was taken", body)
		}
	})
}
