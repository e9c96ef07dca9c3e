package node

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
)

// A subscription reading the change log again as the node closes is
// waited for: Close returns once its goroutine has ended, not with it
// still reading the journal and the store Close goes on to close.
func TestCloseWaitsForASubscriptionReplaying(t *testing.T) {
	ctx := context.Background()
	n, g := openWithSpace(t, "closing")
	for i := range 5 {
		if _, err := n.Put(ctx, g.ID, "app.note", canonical.NewObject("i", float64(i)), &PutOptions{Key: "k" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := n.st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitEventsAt(t, n.ev, uint64(st.Changes))
	inside, release := make(chan struct{}), make(chan struct{})
	n.ev.replayPage = 1
	first := true
	n.ev.replaying = func() { // on the serving goroutine alone
		if first {
			first = false
			close(inside)
			<-release
		}
	}
	s, err := n.Subscribe("", "0", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	<-inside
	closed := make(chan error, 1)
	go func() { closed <- n.Close() }()
	select {
	case err := <-closed:
		close(release)
		t.Fatalf("Close returned (%v) while a subscription was still reading again", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(time.Minute): // a guard against a hang, not a measure
		t.Fatal("Close did not return in a minute once the subscription went on")
	}
	// Its goroutine has ended: the channel is closed, nothing left to come.
	for {
		select {
		case _, ok := <-s.Events():
			if ok {
				continue
			}
			if err := s.Err(); !errors.Is(err, ErrClosed) {
				t.Fatalf("the subscription ended with %v, want ErrClosed", err)
			}
			return
		default:
			t.Fatal("the subscription's channel is still open after Close")
		}
	}
}
