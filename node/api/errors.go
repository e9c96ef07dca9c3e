package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// Error codes of the API itself (docs/api.md, Errors); a write the node
// refuses carries the node's or the judge's code (write/…, standing/…).
const (
	CodeUnauthorized  = "auth/unauthorized" // no bearer token, or not this node's
	CodeTooLarge      = "request/too-large" // the body is over the limit
	CodeTooDeep       = "request/too-deep"  // the body's JSON nests deeper than the limit
	CodeJSON          = "request/json"      // the body is not JSON
	CodeUnknownMember = "request/unknown"   // a member the request does not take
	CodeMissing       = "request/missing"   // a member the request needs is absent
	CodeBad           = "request/bad"       // a member of the wrong type or form
	CodeNotFound      = "not-found"         // no such record, space or route
	CodeClosed        = "node/closed"       // the node is closing
	CodeInternal      = "internal"          // anything else; the node logs it
	CodeSlow          = "events/slow"       // a subscriber fell behind and was dropped
	CodeCursor        = "events/cursor"     // a cursor that is not one
	CodeMethod        = "request/method"    // a route that does not take the method
	CodeGenesis       = space.CodeGenesisShape
)

// CodeCursorGone: a cursor older than the events the node keeps
// (node.ErrCursorGone), answered 410.
const CodeCursorGone = "events/cursor-gone"

// apiError is the body of every error: {"error": {code, message, field?}}.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	Issues  []any  `json:"issues,omitempty"`
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func writeError(w http.ResponseWriter, status int, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": e})
}

// fail answers with the error err is, and its status.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	var we *node.WriteError
	var rf *record.Refusal
	var qe *index.Error
	switch {
	case errors.As(err, &ae):
		status := http.StatusBadRequest
		switch ae.Code {
		case CodeTooLarge:
			status = http.StatusRequestEntityTooLarge
		case CodeNotFound:
			status = http.StatusNotFound
		case CodeCursorGone:
			status = http.StatusGone
		case CodeFileNotHeld:
			status = http.StatusNotFound
		case CodeFileNoKey:
			status = http.StatusForbidden
		case CodeBlobsNotFound:
			status = http.StatusNotFound
		case CodeBlobsChanged:
			status = http.StatusConflict
		case CodeBlobsBadSegment:
			status = http.StatusUnprocessableEntity
		case CodeBlobsUnreachable:
			status = http.StatusServiceUnavailable
		}
		writeError(w, status, ae)
	case errors.As(err, &we):
		status := http.StatusUnprocessableEntity
		switch we.Code {
		case node.CodeSpaceNotKept, node.CodeNotFound:
			status = http.StatusNotFound
		case node.CodeBadInput, node.CodeBadKey:
			status = http.StatusBadRequest
		}
		out := &apiError{Code: we.Code, Message: we.Message, Field: we.Field}
		for _, is := range we.Issues {
			out.Issues = append(out.Issues, map[string]string{"code": is.Code, "path": is.Path, "message": is.Message})
		}
		writeError(w, status, out)
	case errors.As(err, &rf):
		writeError(w, http.StatusUnprocessableEntity, &apiError{Code: rf.Code, Message: rf.Message, Field: rf.Field})
	case errors.As(err, &qe):
		writeError(w, http.StatusBadRequest, &apiError{Code: qe.Code, Message: qe.Message, Field: qe.Path})
	case errors.Is(err, engine.ErrNotFound):
		writeError(w, http.StatusNotFound, &apiError{Code: CodeNotFound, Message: "not held"})
	case errors.Is(err, node.ErrClosed), errors.Is(err, engine.ErrClosed), errors.Is(err, context.Canceled):
		writeError(w, http.StatusServiceUnavailable, &apiError{Code: CodeClosed, Message: "the node is closing; try again"})
	case errors.Is(err, node.ErrSignedOut):
		writeError(w, http.StatusConflict, &apiError{Code: "node/signed-out", Message: err.Error()})
	default:
		s.o.Logger.Error("api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, &apiError{Code: CodeInternal, Message: "the node could not answer; it logged why"})
	}
}

// sizeText says a size as people read it: "1 MiB", or in bytes when it is
// no whole number of KiB or MiB.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

func bad(code, field, msg string) *apiError { return &apiError{Code: code, Field: field, Message: msg} }

// readBody reads a request body: at most MaxBody bytes, its JSON nesting
// (counted without parsing it) at most MaxDepth.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.o.MaxBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, bad(CodeTooLarge, "", "the request is over "+sizeText(s.o.MaxBody)+", the most the node reads")
	}
	if err != nil {
		return nil, bad(CodeJSON, "", "reading the body: "+err.Error())
	}
	if d := depth(b); d > s.o.MaxDepth {
		return nil, bad(CodeTooDeep, "", "the body nests deeper than "+strconv.Itoa(s.o.MaxDepth))
	}
	return b, nil
}

// readObject reads a request body (readBody): an object with no members
// but allowed, and every member in required present.
func (s *Server) readObject(r *http.Request, allowed []string, required ...string) (*canonical.Object, error) {
	b, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	v, err := canonical.Parse(b)
	if err != nil {
		return nil, bad(CodeJSON, "", "the body is not JSON: "+err.Error())
	}
	o, ok := v.(*canonical.Object)
	if !ok {
		return nil, bad(CodeBad, "", "the body is a JSON object")
	}
	for _, m := range o.Members {
		if !slices.Contains(allowed, m.Name) {
			return nil, bad(CodeUnknownMember, m.Name, "this request takes no member "+strconv.Quote(m.Name)+" (it takes "+quoteAll(allowed)+")")
		}
	}
	for _, m := range required {
		if !o.Has(m) {
			return nil, bad(CodeMissing, m, "this request needs "+strconv.Quote(m))
		}
	}
	return o, nil
}

func quoteAll(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(s)
	}
	return out
}

// depth is how deeply JSON text nests, counted without parsing it, so a
// body nested 10,000 deep is refused before anything recurses into it.
func depth(b []byte) int {
	d, max, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			if d++; d > max {
				max = d
			}
		case c == '}' || c == ']':
			d--
		}
	}
	return max
}

func str(o *canonical.Object, name string) (string, error) {
	v, ok := o.Get(name)
	if !ok {
		return "", nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", bad(CodeBad, name, strconv.Quote(name)+" is a string")
	}
	return s, nil
}

func strList(o *canonical.Object, name string) ([]string, error) {
	v, ok := o.Get(name)
	if !ok {
		return nil, nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, bad(CodeBad, name, strconv.Quote(name)+" is a list of strings")
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, bad(CodeBad, name, strconv.Quote(name)+" is a list of strings")
		}
		out = append(out, s)
	}
	return out, nil
}

// writeJSON answers 200 (or status) with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	switch b := v.(type) {
	case []byte:
		w.Write(b)
		w.Write([]byte("\n"))
	default:
		json.NewEncoder(w).Encode(v)
	}
}
