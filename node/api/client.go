package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrNotRunning: no node is serving its API in the directory.
var ErrNotRunning = errors.New("minca/api: no node is running in the directory")

// Client calls a running node's API.
type Client struct {
	base  string
	token string
	hc    *http.Client
}

// Error is an error the API answered with.
type Error struct {
	Status  int
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field"`
	// Issues are a refused body's or links' problems, each at its path
	// ($.body.text) with why (a schema's, 02 §6.2).
	Issues []Issue `json:"issues"`
}

// Issue is one problem of a refused body or its links.
type Issue struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Error is "code (field): message", then each issue as "path: why (code)".
func (e *Error) Error() string {
	s := e.Code + ": " + e.Message
	if e.Field != "" {
		s = e.Code + " (" + e.Field + "): " + e.Message
	}
	for _, is := range e.Issues {
		// A path is in what Field names: $.text of the body is body.text.
		p := strings.TrimPrefix(strings.TrimPrefix(is.Path, "$"), ".")
		switch {
		case e.Field != "" && p == "":
			p = e.Field
		case e.Field != "" && !strings.HasPrefix(p, "["):
			p = e.Field + "." + p
		case e.Field != "":
			p = e.Field + p
		}
		s += "; " + p + ": " + is.Message + " (" + is.Code + ")"
	}
	return s
}

// Dial finds the node running in dir (its AddressName and token) and
// checks that it answers; ErrNotRunning when none does.
func Dial(ctx context.Context, dir string) (*Client, error) {
	b, err := os.ReadFile(filepath.Join(dir, AddressName))
	if err != nil {
		return nil, ErrNotRunning
	}
	var a struct{ URL string }
	if json.Unmarshal(b, &a) != nil || a.URL == "" {
		return nil, ErrNotRunning
	}
	tok, err := os.ReadFile(filepath.Join(dir, TokenName))
	if err != nil {
		return nil, ErrNotRunning
	}
	c := NewClient(a.URL, strings.TrimSpace(string(tok)))
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := c.Do(pctx, "GET", "/v1/node", nil); err != nil {
		var ae *Error
		if errors.As(err, &ae) {
			return nil, err
		}
		return nil, ErrNotRunning
	}
	return c, nil
}

// NewClient calls the API at url ("http://HOST:PORT" or "unix:PATH") with
// token.
func NewClient(url, token string) *Client {
	c := &Client{base: url, token: token, hc: &http.Client{}}
	if path, ok := strings.CutPrefix(url, "unix:"); ok {
		c.base = "http://minca"
		c.hc.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}}
	}
	return c
}

// Do sends a request with body (marshalled to JSON unless nil or
// []byte) and returns the answer's JSON, or an *Error.
func (c *Client) Do(ctx context.Context, method, path string, body any) (json.RawMessage, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	ctype := ""
	if rd != nil {
		ctype = "application/json"
	}
	resp, err := c.send(ctx, method, path, rd, ctype)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out json.RawMessage
	if err := decodeAnswer(resp, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// send sends a request with the token, and body (nil: none) of type
// ctype.
func (c *Client) send(ctx context.Context, method, path string, body io.Reader, ctype string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	return c.hc.Do(req)
}

// decodeAnswer reads a JSON answer (at most 64 MiB) into out, or the
// *Error an answer of status 300 or more is.
func decodeAnswer(resp *http.Response, out any) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct{ Error *Error }
		if json.Unmarshal(b, &e) != nil || e.Error == nil {
			return &Error{Status: resp.StatusCode, Code: CodeInternal, Message: strings.TrimSpace(string(b))}
		}
		e.Error.Status = resp.StatusCode
		return e.Error
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = b
		return nil
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// Events reads a server-sent event stream at path, calling fn with each
// event's data, until ctx ends, the stream ends, or fn returns false. A
// stream that ends with an error event (a subscriber dropped as too slow,
// the node closing) returns it as an *Error.
func (c *Client) Events(ctx context.Context, path string, fn func(data json.RawMessage) bool) error {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var e struct{ Error *Error }
		if json.Unmarshal(b, &e) == nil && e.Error != nil {
			e.Error.Status = resp.StatusCode
			return e.Error
		}
		return fmt.Errorf("minca/api: events: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	kind := ""
	for sc.Scan() {
		line := sc.Text()
		if k, ok := strings.CutPrefix(line, "event: "); ok {
			kind = k
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if kind == "error" {
			var e struct{ Error *Error }
			if json.Unmarshal([]byte(data), &e) != nil || e.Error == nil {
				return fmt.Errorf("minca/api: events: the stream ended with an error event: %s", data)
			}
			e.Error.Status = http.StatusOK
			return e.Error
		}
		if !fn(json.RawMessage(data)) {
			return nil
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
