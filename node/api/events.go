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
		var we *node.WriteError
		switch {
		case errors.Is(err, node.ErrClosed), errors.As(err, &we):
			return err
		case errors.Is(err, node.ErrCursorGone):
			return bad(CodeCursorGone, "after", err.Error())
		}
		return bad(CodeCursor, "after", err.Error())
	}
	defer sub.Close()
	return s.stream(w, r, func(ctx context.Context) (message, bool) {
		select {
		case <-ctx.Done():
			return message{}, false
		case ev, ok := <-sub.Events():
			if !ok {
				return errorMessage(endOf(sub)), false
			}
			b, _ := json.Marshal(ev)
			return message{id: ev.Cursor, event: ev.Kind, data: b}, true
		}
	})
}

// endOf is why a subscription ended, as an API error; nil when closed.
func endOf(sub *node.Subscription) *apiError {
	switch err := sub.Err(); {
	case err == nil:
		return nil
	case errors.Is(err, node.ErrSlow):
		return &apiError{Code: CodeSlow, Message: err.Error()}
	case errors.Is(err, node.ErrCursorGone):
		return &apiError{Code: CodeCursorGone, Message: err.Error()}
	case errors.Is(err, node.ErrClosed), errors.Is(err, engine.ErrClosed):
		return &apiError{Code: CodeClosed, Message: "the node is closing; resume from the last cursor"}
	default:
		return &apiError{Code: CodeInternal, Message: err.Error()}
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
		return bad(CodeTooLarge, "q", "the query is over "+sizeText(s.o.MaxBody))
	}
	if depth([]byte(q)) > s.o.MaxDepth {
		return bad(CodeTooDeep, "q", "the query nests deeper than "+strconv.Itoa(s.o.MaxDepth))
	}
	lq, err := s.n.WatchQuery(r.Context(), r.PathValue("space"), json.RawMessage(q))
	if err != nil {
		return err
	}
	defer lq.Close()
	return s.stream(w, r, func(ctx context.Context) (message, bool) {
		select {
		case <-ctx.Done():
			return message{}, false
		case ch, ok := <-lq.Changes():
			if !ok {
				return errorMessage(liveEnd(lq.Err())), false
			}
			b, _ := json.Marshal(ch)
			return message{event: "change", data: b}, true
		}
	})
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

// message is one message of a stream: an event (its Server-Sent Events id,
// when it has one, and name, and its JSON), or the error that ends it.
type message struct {
	id, event string
	code      string // an error's code
	data      []byte // nil: nothing to send
}

// errorMessage is the last message of a stream that ends with e; nothing
// when e is nil (the stream was closed).
func errorMessage(e *apiError) message {
	if e == nil {
		return message{}
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return message{event: "error", code: e.Code, data: b}
}

// stream sends the messages next gives until it says stop: as Server-Sent
// Events (id:, event:, data:), or as WebSocket text messages (the data)
// when the request asks to upgrade, a WebSocket that ends with an error
// closed as 1013 (try again later) with the error's code. A subscriber
// taking no message for writeTimeout is cut.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, next func(ctx context.Context) (message, bool)) error {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		c, err := websocket.Accept(w, r, nil) // same-origin only: browsers' cross-site pages are refused
		if err != nil {
			return nil // Accept answered already
		}
		defer c.CloseNow()
		ctx := c.CloseRead(r.Context())
		for {
			m, more := next(ctx)
			if m.data != nil {
				wctx, cancel := context.WithTimeout(ctx, writeTimeout)
				err := c.Write(wctx, websocket.MessageText, m.data)
				cancel()
				if err != nil {
					return nil
				}
			}
			switch {
			case more:
				continue
			case ctx.Err() != nil: // the subscriber left, or the server stops
			case m.event == "error":
				c.Close(websocket.StatusTryAgainLater, m.code)
			default:
				c.Close(websocket.StatusNormalClosure, "")
			}
			return nil
		}
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return nil
	}
	for {
		m, more := next(r.Context())
		if m.data != nil {
			rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			if m.id != "" {
				fmt.Fprintf(w, "id: %s\n", m.id)
			}
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", m.event, m.data); err != nil {
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
