// Package relayroom is a [connect.Room] over a relay (06 §3; 04;
// docs/sync.md, "Relay"): one side of connecting by code joins the code's
// room on a shared relay under a throwaway did:key, introductions off, and
// talks to the other by what the relay forwards. `minca connect` and
// `minca home` use it.
package relayroom

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/transport"
)

// MaxPeers bounds the peers a room remembers having heard from; a message
// from a peer past it is dropped. A room holds at most 64 members at a
// relay (transport.RelayOptions.MaxMembers), but members can come and go.
const MaxPeers = 256

// MaxPending bounds the events waiting for Next; past it a message is
// dropped, as a relay drops one for a member that does not read.
const MaxPending = 1024

// Options shape a [Join]. nil means defaults.
type Options struct {
	// ConnectTimeout bounds reaching the relay the first time: Join
	// fails (wrapping transport.ErrUnreachable when nothing answered) if
	// it has no connection by then. Default 10 s. Later losses are
	// redialled for as long as the room is open.
	ConnectTimeout time.Duration
	// Transport tunes the relay connection; its Self is replaced by the
	// throwaway key. nil: defaults.
	Transport *transport.Options
	// Logger hears the relay's refusals, at debug level. nil: none.
	Logger *slog.Logger
}

// Room is one side's place in a code's room on a relay. It is a
// [connect.Hailer]: peers do not see each other join, so a peer is told of
// (a RoomEvent with no Message) just before its first message. Safe for
// concurrent use.
type Room struct {
	rc     *transport.RelayClient
	room   string
	self   string
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	known   map[string]bool
	pending []connect.RoomEvent // guarded by mu; read by Next only
	once    sync.Once
}

var _ connect.Hailer = (*Room)(nil)

// Join joins room (a code's: [connect.Code.Room]) on the relay at url
// (ws:// or wss://, the path included: …/minca/relay) under a fresh
// throwaway key, introductions off, and returns once the relay connection
// is up. Close leaves it.
func Join(ctx context.Context, url, room string, o *Options) (*Room, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = 10 * time.Second
	}
	if opts.ConnectTimeout < 0 {
		return nil, fmt.Errorf("minca/relayroom: options: ConnectTimeout %v is negative", opts.ConnectTimeout)
	}
	key, err := identity.GenerateKey()
	if err != nil {
		return nil, err
	}
	var to transport.Options
	if opts.Transport != nil {
		to = *opts.Transport
	}
	to.Self = transport.Carrier(key)
	firstErr := make(chan error, 1)
	rc, err := transport.NewRelayClient(url, &to, &transport.RelayClientOptions{
		Logger: opts.Logger,
		Redial: &transport.RedialOptions{Min: 100 * time.Millisecond, Max: 2 * time.Second, OnError: func(err error, _ time.Duration) {
			select {
			case firstErr <- err:
			default:
			}
		}},
	})
	if err != nil {
		return nil, err
	}
	run, cancel := context.WithCancel(context.Background())
	r := &Room{rc: rc, room: room, self: key.DID(), cancel: cancel, done: make(chan struct{}), known: map[string]bool{}}
	if err := rc.Join(ctx, r.room, false); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(r.done)
		rc.Run(run)
	}()
	wait, stop := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var last error
	for !rc.Connected() {
		select {
		case err := <-firstErr:
			last = err
		case <-tick.C:
		case <-wait.Done():
			r.Close()
			if errors.Is(ctx.Err(), context.Canceled) {
				return nil, ctx.Err()
			}
			if last == nil {
				last = transport.ErrUnreachable
			}
			return nil, fmt.Errorf("minca/relayroom: no connection to the relay %s: %w", url, last)
		}
	}
	if err := r.settle(wait); err != nil {
		r.Close()
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("minca/relayroom: the relay %s did not put this side in room %s: %w", url, room, err)
	}
	return r, nil
}

// settle waits until the relay has this side in the room: it forwards a
// note to itself there (which nobody else sees) until it comes back, so
// that what another member sends from then on reaches it. What others sent
// meanwhile is kept for Next.
func (r *Room) settle(ctx context.Context) error {
	var nonce [12]byte
	rand.Read(nonce[:])
	echo := []byte(`{"joined":"` + base64.RawURLEncoding.EncodeToString(nonce[:]) + `"}`)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		// A forward the relay takes before the join is refused (not in
		// the room), so it is sent again until one comes back.
		if err := r.rc.Forward(ctx, r.room, r.self, echo); err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
	wait:
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
				break wait
			case f := <-r.rc.Forwards():
				if f.Room == r.room && f.From == r.self && bytes.Equal(f.Payload, echo) {
					return nil
				}
				r.take(f)
			}
		}
	}
}

// ID is this side's throwaway key in the room, as the other side sees it.
func (r *Room) ID() string { return r.self }

// Next returns the next peer heard from (Message nil) or message.
func (r *Room) Next(ctx context.Context) (connect.RoomEvent, error) {
	for {
		r.mu.Lock()
		if len(r.pending) > 0 {
			ev := r.pending[0]
			r.pending = r.pending[1:]
			r.mu.Unlock()
			return ev, nil
		}
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return connect.RoomEvent{}, ctx.Err()
		case <-r.done:
			return connect.RoomEvent{}, errors.New("minca/relayroom: the room was left")
		case f := <-r.rc.Forwards():
			r.take(f)
		}
	}
}

// take queues a forward from another member of the room for Next, told of
// its sender first when it is the sender's first.
func (r *Room) take(f transport.Forward) {
	if f.Room != r.room || f.From == "" || f.From == r.self {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pending) >= MaxPending-1 {
		return
	}
	if !r.known[f.From] {
		if len(r.known) >= MaxPeers {
			return
		}
		r.known[f.From] = true
		r.pending = append(r.pending, connect.RoomEvent{Peer: f.From})
	}
	r.pending = append(r.pending, connect.RoomEvent{Peer: f.From, Message: []byte(f.Payload)})
}

// Send forwards message (a JSON object, as every message of 06 §3 is) to
// one peer of the room.
func (r *Room) Send(ctx context.Context, peer string, message []byte) error {
	if peer == "" {
		return errors.New("minca/relayroom: a message goes to one peer; Hail is for the whole room")
	}
	return r.forward(ctx, peer, message)
}

// Hail forwards message to every other member of the room.
func (r *Room) Hail(ctx context.Context, message []byte) error { return r.forward(ctx, "", message) }

func (r *Room) forward(ctx context.Context, to string, message []byte) error {
	if !json.Valid(message) || len(message) == 0 || message[0] != '{' {
		return errors.New("minca/relayroom: a message is a JSON object")
	}
	return r.rc.Forward(ctx, r.room, to, json.RawMessage(message))
}

// Close leaves the room and ends the relay connection.
func (r *Room) Close() error {
	r.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		r.rc.Leave(ctx, r.room)
		r.cancel()
		<-r.done
	})
	return nil
}
