package rate

import (
	"strconv"
	"testing"
	"time"
)

func TestBurstThenRate(t *testing.T) {
	b := New(2, 3)
	now := time.Unix(1_700_000_000, 0)
	for i := range 3 {
		if !b.Take(now, "a") {
			t.Fatalf("take %d of a burst of 3 refused", i+1)
		}
	}
	if b.Take(now, "a") {
		t.Fatal("a fourth take at once was allowed")
	}
	if !b.Take(now, "b") {
		t.Fatal("another name's bucket is shared")
	}
	if !b.Take(now.Add(500*time.Millisecond), "a") {
		t.Fatal("half a second at 2 a second gave no token")
	}
	if b.Take(now.Add(500*time.Millisecond), "a") {
		t.Fatal("one token taken twice")
	}
}

// Take with two names takes from both or neither.
func TestTakeAllOrNone(t *testing.T) {
	b := New(1, 1)
	now := time.Unix(1_700_000_000, 0)
	if !b.Take(now, "key", "addr") {
		t.Fatal("refused")
	}
	if b.Take(now, "other-key", "addr") {
		t.Fatal("the address's empty bucket was not consulted")
	}
	if !b.Take(now, "other-key") {
		t.Fatal("the refusal took other-key's token")
	}
}

func TestTableBounded(t *testing.T) {
	b := New(1, 4)
	now := time.Unix(1_700_000_000, 0)
	for i := range 3 * maxTracked {
		b.Take(now, strconv.Itoa(i))
	}
	if len(b.m) > maxTracked {
		t.Fatalf("%d buckets kept, bound %d", len(b.m), maxTracked)
	}
}
