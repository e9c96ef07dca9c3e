package relayroom_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/connect/relayroom"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

// A relay that cannot be reached is said so: transport.ErrUnreachable.
func TestJoinUnreachable(t *testing.T) {
	code, _ := connect.NewCode()
	_, err := relayroom.Join(context.Background(), "ws://127.0.0.1:1/minca/relay", code.Room(), &relayroom.Options{ConnectTimeout: time.Second})
	if !errors.Is(err, transport.ErrUnreachable) {
		t.Fatalf("%v, want ErrUnreachable", err)
	}
}

// Two sides of a room find each other by what they send: a hail reaches
// a member that joined before it, which learns of its sender first; an
// answer to that sender reaches it alone; a member of another room hears
// nothing.
func TestHailAndAnswer(t *testing.T) {
	srv := transporttest.StartRelay(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code, _ := connect.NewCode()
	other, _ := connect.NewCode()
	join := func(room string) *relayroom.Room {
		r, err := relayroom.Join(ctx, srv.URL(), room, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	home, program, elsewhere := join(code.Room()), join(code.Room()), join(other.Room())
	if err := program.Hail(ctx, []byte(`{"type":"code:hello"}`)); err != nil {
		t.Fatal(err)
	}
	ev, err := home.Next(ctx)
	if err != nil || ev.Peer != program.ID() || ev.Message != nil {
		t.Fatalf("first %+v %v, want the program, connected", ev, err)
	}
	ev, err = home.Next(ctx)
	if err != nil || ev.Peer != program.ID() || string(ev.Message) != `{"type":"code:hello"}` {
		t.Fatalf("then %+v %v", ev, err)
	}
	if err := home.Send(ctx, program.ID(), []byte(`{"type":"code:key"}`)); err != nil {
		t.Fatal(err)
	}
	program.Next(ctx) // the home, connected
	if ev, err := program.Next(ctx); err != nil || ev.Peer != home.ID() || string(ev.Message) != `{"type":"code:key"}` {
		t.Fatalf("%+v %v", ev, err)
	}
	if err := home.Send(ctx, "", []byte(`{}`)); err == nil {
		t.Fatal("a send to nobody in particular went")
	}
	if err := home.Send(ctx, program.ID(), []byte(`not json`)); err == nil {
		t.Fatal("a message that is not a JSON object went")
	}
	quiet, stop := context.WithTimeout(ctx, 200*time.Millisecond)
	defer stop()
	if ev, err := elsewhere.Next(quiet); err == nil {
		t.Fatalf("another room heard %+v", ev)
	}
}
