package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/node"
)

// writeTimeout bounds one write of an event to a subscriber: one that
// takes no events for this long is dropped (its buffer fills meanwhile).
const writeTimeout = 10 * time.Second

// events serves a space's events (all spaces' on /v1/events) after the
// cursor ?after=, as Server-Sent Events, or over a WebSocket when the
// request asks to upgrade: one JSON text message an event. When the
// subscriber falls behind it gets a last {"error": {code: "events/slow"}}
// and is closed; it resumes from the last cursor it took.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	after := r.URL.Query().Get("after")
	sub, err := s.n.Subscribe(r.PathValue("space"), after, 1024)
	if err != nil {
		if errors.Is(err, node.ErrClosed) {
			return err
		}
		return bad(CodeCursor, "after", err.Error())
	}
	defer sub.Close()
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return s.eventsWS(w, r, sub)
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return nil
	}
	for {
		select {
		case <-r.Context().Done():
			return nil
		case ev, ok := <-sub.Events():
			rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			if !ok {
				if e := endOf(sub); e != nil {
					b, _ := json.Marshal(map[string]any{"error": e})
					fmt.Fprintf(w, "event: error\ndata: %s\n\n", b)
					rc.Flush()
				}
				return nil
			}
			b, _ := json.Marshal(ev)
			if _, err := fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", ev.Cursor, ev.Kind, b); err != nil {
				return nil
			}
			if err := rc.Flush(); err != nil {
				return nil
			}
		}
	}
}

// endOf is why a subscription ended, as an API error; nil when closed.
func endOf(sub *node.Subscription) *apiError {
	switch err := sub.Err(); {
	case err == nil:
		return nil
	case errors.Is(err, node.ErrSlow):
		return &apiError{Code: CodeSlow, Message: err.Error()}
	case errors.Is(err, node.ErrClosed):
		return &apiError{Code: CodeClosed, Message: "the node is closing; resume from the last cursor"}
	default:
		return &apiError{Code: CodeInternal, Message: err.Error()}
	}
}

func (s *Server) eventsWS(w http.ResponseWriter, r *http.Request, sub *node.Subscription) error {
	c, err := websocket.Accept(w, r, nil) // same-origin only: browsers' cross-site pages are refused
	if err != nil {
		return nil // Accept answered already
	}
	defer c.CloseNow()
	ctx := c.CloseRead(r.Context())
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-sub.Events():
			wctx, cancel := context.WithTimeout(ctx, writeTimeout)
			if !ok {
				if e := endOf(sub); e != nil {
					b, _ := json.Marshal(map[string]any{"error": e})
					c.Write(wctx, websocket.MessageText, b)
					cancel()
					c.Close(websocket.StatusTryAgainLater, e.Code)
					return nil
				}
				cancel()
				c.Close(websocket.StatusNormalClosure, "")
				return nil
			}
			b, _ := json.Marshal(ev)
			err := c.Write(wctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				return nil
			}
		}
	}
}

// liveQuery serves a live query (?q= the query as JSON, 06 §2.11): its
// result's changes — {kind: "enter" | "change" | "leave", entry} — as they
// are committed, as Server-Sent Events or over a WebSocket. Start it, then
// ask the query for its first page: a change committed between the two
// may be in both.
func (s *Server) liveQuery(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query().Get("q")
	if int64(len(q)) > s.o.MaxBody {
		return bad(CodeTooLarge, "q", "the query is over "+strconv.FormatInt(s.o.MaxBody, 10)+" bytes")
	}
	if depth([]byte(q)) > s.o.MaxDepth {
		return bad(CodeTooDeep, "q", "the query nests deeper than "+strconv.Itoa(s.o.MaxDepth))
	}
	lq, err := s.n.WatchQuery(r.Context(), r.PathValue("space"), json.RawMessage(q))
	if err != nil {
		return err
	}
	defer lq.Close()
	next := func(ctx context.Context) ([]byte, bool) {
		select {
		case <-ctx.Done():
			return nil, false
		case ch, ok := <-lq.Changes():
			if !ok {
				if e := liveEnd(lq.Err()); e != nil {
					b, _ := json.Marshal(map[string]any{"error": e})
					return b, false
				}
				return nil, false
			}
			b, _ := json.Marshal(ch)
			return b, true
		}
	}
	return s.stream(w, r, next)
}

// liveEnd is why a live query ended, as an API error; nil when closed.
func liveEnd(err error) *apiError {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, index.ErrSlow), errors.Is(err, index.ErrBehind):
		return &apiError{Code: CodeSlow, Message: err.Error() + "; start it again, then read a page"}
	case errors.Is(err, engine.ErrClosed), errors.Is(err, node.ErrClosed):
		return &apiError{Code: CodeClosed, Message: "the node is closing; start the live query again"}
	}
	return &apiError{Code: CodeInternal, Message: err.Error()}
}

// stream sends messages from next until it says stop: Server-Sent Events
// (event "change"; a last message that next gives with false is an
// "error"), or WebSocket text messages when the request asks to upgrade.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, next func(ctx context.Context) ([]byte, bool)) error {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return nil
		}
		defer c.CloseNow()
		ctx := c.CloseRead(r.Context())
		for {
			b, more := next(ctx)
			if b != nil {
				wctx, cancel := context.WithTimeout(ctx, writeTimeout)
				err := c.Write(wctx, websocket.MessageText, b)
				cancel()
				if err != nil {
					return nil
				}
			}
			if !more {
				c.Close(websocket.StatusNormalClosure, "")
				return nil
			}
		}
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	rc.Flush()
	for {
		b, more := next(r.Context())
		if b != nil {
			rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			kind := "change"
			if !more {
				kind = "error"
			}
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, b); err != nil {
				return nil
			}
			if rc.Flush() != nil {
				return nil
			}
		}
		if !more {
			return nil
		}
	}
}
