package connect

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Room is one side's place in the code's relay room (06 §3; 04): the
// peers it is connected to there, and their messages. Both sides join the
// room named by [Code.Room] under a throwaway did:key, introductions off.
// The transport's relay rooms implement it; connecttest has one in memory.
type Room interface {
	// Next blocks until something happens in the room: a peer connected
	// (Message nil) or a message from one. It returns ctx's error once ctx
	// ends, and an error when the room is gone.
	Next(ctx context.Context) (RoomEvent, error)
	// Send sends a message to one peer.
	Send(ctx context.Context, peer string, message []byte) error
}

// Hailer is a Room whose peers do not see each other join: a relay room
// with introductions off (06 §3; 04), where the two sides find each other
// only by what they send. A peer becomes known to the other side (a
// RoomEvent with no Message) just before its first message. RunProgram
// hails such a room with its commitment at intervals (RunOptions.Hail)
// until it takes a key, since the home may join after it.
type Hailer interface {
	Room
	// Hail sends message to every other peer in the room.
	Hail(ctx context.Context, message []byte) error
}

// RoomEvent is a peer connecting (Message nil) or a message from a peer.
type RoomEvent struct {
	Peer    string
	Message []byte
}

// RunOptions tune a run of either side.
type RunOptions struct {
	// Dropped is told of each message a side ignored, and why (a
	// *Refusal), and of each it could not send (the peer gone, say): the
	// run goes on, as others may still come. nil tells nobody.
	Dropped func(peer string, err error)
	// Wait is how long a home waits for a program to ask before it says
	// nobody waits on the link any more (code/nobody): no hello came, or a
	// program said hello and went. 0 means 2 minutes. A program waits as
	// long as ctx lets it.
	Wait time.Duration
	// Hail is how often a program hails a [Hailer] room with its
	// commitment while it has no key. 0 means 1 second.
	Hail time.Duration
}

func (o *RunOptions) hail() time.Duration {
	if o != nil && o.Hail > 0 {
		return o.Hail
	}
	return time.Second
}

func (o *RunOptions) dropped(peer string, err error) {
	if o != nil && o.Dropped != nil {
		o.Dropped(peer, err)
	}
}

// pump reads the room's events into a channel until ctx ends.
func pump(ctx context.Context, room Room) (<-chan RoomEvent, <-chan error) {
	events, errs := make(chan RoomEvent), make(chan error, 1)
	go func() {
		for {
			ev, err := room.Next(ctx)
			if err != nil {
				errs <- err
				return
			}
			select {
			case events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return events, errs
}

// sendAll sends out; a send that fails is dropped, unless ctx has ended.
func sendAll(ctx context.Context, room Room, out []Send, o *RunOptions) error {
	for _, s := range out {
		if err := room.Send(ctx, s.Peer, s.Message); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			o.dropped(s.Peer, fmt.Errorf("minca/connect: sending to %s: %w", s.Peer, err))
		}
	}
	return nil
}

// CheckAsker asks the person for the check the home shows them, and
// returns what they gave. tries is how many they gave before that did
// not match (0 the first time).
type CheckAsker func(ctx context.Context, tries int) (string, error)

// RunProgram drives a program's side over room (06 §3) until it ends: it
// returns the grant kept, with Home the page opened, or why not — the
// home's no (code/denied), a grant that failed its checks, checks that did
// not match (code/check), the asker's error, or ctx's. ask is called once
// the home has heard the program, and again after a check that does not
// match; it runs beside the room, so the answer may come before or after
// the person gives the check. A [Hailer] room is hailed with the
// program's commitment at once and every o.Hail until it takes a key.
func RunProgram(ctx context.Context, room Room, p *Program, ask CheckAsker, o *RunOptions) (*Grant, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, errs := pump(ctx, room)
	hailer, _ := room.(Hailer)
	var hail <-chan time.Time
	if hailer != nil {
		t := time.NewTicker(o.hail())
		defer t.Stop()
		hail = t.C
		if err := hailOnce(ctx, hailer, p, o); err != nil {
			return nil, err
		}
	}
	type given struct {
		digits string
		err    error
	}
	checks := make(chan given, 1)
	asking := false
	for !p.Finished() {
		if p.AwaitsCheck() && !asking {
			asking = true
			go func(tries int) {
				d, err := ask(ctx, tries)
				checks <- given{d, err}
			}(p.tries)
		}
		var out []Send
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case err := <-errs:
			return nil, fmt.Errorf("minca/connect: the room: %w", err)
		case <-hail:
			if err := hailOnce(ctx, hailer, p, o); err != nil {
				return nil, err
			}
		case ev := <-events:
			if ev.Message == nil {
				out = p.Joined(ev.Peer)
				break
			}
			var err error
			if out, err = p.Receive(ev.Peer, ev.Message); err != nil {
				o.dropped(ev.Peer, err)
			}
		case c := <-checks:
			asking = false
			if c.err != nil {
				return nil, c.err
			}
			var err error
			if out, err = p.GiveCheck(c.digits); err != nil && !isRefusal(err, CodeCodeCheck) {
				return nil, err
			}
		}
		if err := sendAll(ctx, room, out, o); err != nil {
			return nil, err
		}
	}
	return p.Result()
}

// hailOnce sends the program's commitment to the whole room while it has
// no key; a hail that fails is dropped, as the next may reach.
func hailOnce(ctx context.Context, room Hailer, p *Program, o *RunOptions) error {
	msg := p.Hello()
	if msg == nil {
		return nil
	}
	if err := room.Hail(ctx, msg); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o.dropped("", fmt.Errorf("minca/connect: hailing the room: %w", err))
	}
	return nil
}

// Decision is the person's answer to a program that asked: a grant they
// allowed (from [Home.GrantCode]), or a reason to say no with.
type Decision struct {
	Grant  *Grant
	Denied string
}

// Decider shows the person the program's name, as a name only, and the
// check (ask.Check), and returns what they decided.
type Decider func(ctx context.Context, ask Ask) (Decision, error)

// RunHome drives a home's side over room (06 §3) until it ends: it returns
// nil once the program has said done, or once the person's no is sent;
// code/nobody when no program has asked within o.Wait (a home opened at a
// link nobody waits on any more says so); the decider's error; or ctx's
// (a program that never says done leaves it waiting until ctx ends).
func RunHome(ctx context.Context, room Room, h *HomeExchange, decide Decider, o *RunOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait := 2 * time.Minute
	if o != nil && o.Wait > 0 {
		wait = o.Wait
	}
	nobody := time.NewTimer(wait)
	defer nobody.Stop()
	events, errs := pump(ctx, room)
	decisions := make(chan Decision, 1)
	decisionErrs := make(chan error, 1)
	deciding := false
	for h.state != HomeDone && h.state != HomeDenied {
		if h.state == HomeAsked && !deciding {
			deciding = true
			go func(a Ask) {
				d, err := decide(ctx, a)
				if err != nil {
					decisionErrs <- err
					return
				}
				decisions <- d
			}(h.ask)
		}
		var out []Send
		var err error
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errs:
			return fmt.Errorf("minca/connect: the room: %w", err)
		case <-nobody.C:
			if h.state < HomeAsked {
				return refuse(CodeCodeNobody, "", fmt.Sprintf("no program asked on this link within %s: nobody waits on it any more; start again from the program (06 §3)", wait))
			}
		case ev := <-events:
			if ev.Message == nil {
				continue
			}
			if out, err = h.Receive(ev.Peer, ev.Message); err != nil {
				o.dropped(ev.Peer, err)
			}
		case err := <-decisionErrs:
			return err
		case d := <-decisions:
			if d.Grant != nil {
				out, err = h.Answer(d.Grant)
			} else {
				out, err = h.Deny(d.Denied)
			}
			if err != nil {
				return err
			}
		}
		if err := sendAll(ctx, room, out, o); err != nil {
			return err
		}
	}
	return nil
}

func isRefusal(err error, code string) bool {
	var r *Refusal
	return errors.As(err, &r) && r.Code == code
}
