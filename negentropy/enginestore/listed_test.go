package enginestore_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"iter"
	"testing"

	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/negentropy/enginestore"
)

// placedOrder is fakeOrder whose store holds the i-th item at place
// 1000+i.
type placedOrder struct{ *fakeOrder }

func (p placedOrder) IteratePlaced(ctx context.Context, sc enginestore.Scope, from negentropy.Item) iter.Seq2[enginestore.Placed, error] {
	return func(yield func(enginestore.Placed, error) bool) {
		for it, err := range p.Iterate(ctx, sc, from) {
			if !yield(enginestore.Placed{Item: it, At: p.at(it)}, err) {
				return
			}
		}
	}
}

func (p placedOrder) at(it negentropy.Item) uint64 {
	for i := range p.items {
		if p.items[i] == it {
			return 1000 + uint64(i)
		}
	}
	return 0
}

func placedItems(n int) []negentropy.Item {
	items := make([]negentropy.Item, n)
	for i := range items {
		items[i] = negentropy.Item{Timestamp: uint64(i / 3), ID: sha256.Sum256(binary.BigEndian.AppendUint64(nil, uint64(i)))}
	}
	negentropySort(items)
	return items
}

func negentropySort(items []negentropy.Item) {
	for i := 1; i < len(items); i++ {
		for j := i; j > 0 && items[j].Compare(items[j-1]) < 0; j-- {
			items[j], items[j-1] = items[j-1], items[j]
		}
	}
}

// listAll reconciles an empty set against a responder over order whose
// Store notes in l, and returns the ids the initiator found it needs.
func listAll(t *testing.T, order enginestore.SyncOrder, l *enginestore.Listed) []negentropy.ID {
	t.Helper()
	empty, err := enginestore.Build(context.Background(), &fakeOrder{}, scope, enginestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := enginestore.Build(context.Background(), order, scope, enginestore.Options{BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	st = st.Fork(context.Background())
	st.List(l)
	c, _ := negentropy.NewClient(empty, 4096)
	s, _ := negentropy.NewServer(st, 4096)
	q, err := c.Initiate()
	var need []negentropy.ID
	for err == nil && q != nil {
		var ans []byte
		if ans, err = s.Reconcile(q); err != nil {
			break
		}
		var r negentropy.Round
		if r, err = c.Reconcile(ans); err != nil {
			break
		}
		need = append(need, r.Need...)
		q = r.Next
	}
	if err != nil {
		t.Fatal(err)
	}
	return need
}

// A responder's Store given a Listed notes where each id it lists is
// held: the initiator's WANT of them finds every one's place, once (an
// id asked again is not found: it is forgotten once asked), and ids not
// listed have none.
func TestListedPlacesWhatWasListed(t *testing.T) {
	items := placedItems(500)
	order := placedOrder{&fakeOrder{items: items}}
	l := enginestore.NewListed(enginestore.NewRoom(1 << 20))
	defer l.Close()
	l.Keep()
	need := listAll(t, order, l)
	if len(need) != len(items) {
		t.Fatalf("the initiator needs %d ids, want %d", len(need), len(items))
	}
	want := map[negentropy.ID]uint64{}
	for i, it := range items {
		want[it.ID] = 1000 + uint64(i)
	}
	asked := append(need, sha256.Sum256([]byte("not listed")))
	at := make([]uint64, len(asked))
	l.Places(len(asked), func(i int) negentropy.ID { return asked[i] }, at)
	for i, d := range asked {
		if at[i] != want[d] {
			t.Fatalf("id %s: place %d, want %d", d, at[i], want[d])
		}
	}
	again := make([]uint64, len(asked))
	l.Places(len(asked), func(i int) negentropy.ID { return asked[i] }, again)
	for i, a := range again {
		if a != 0 {
			t.Fatalf("id %s asked again: place %d, want none (forgotten once asked)", asked[i], a)
		}
	}
}

// What Listed remember together is bounded by their Room: past it ids
// are not noted (and are then looked up by id), and a Listed closed
// gives its room back to the next.
func TestListedBoundedByRoom(t *testing.T) {
	items := placedItems(300)
	order := placedOrder{&fakeOrder{items: items}}
	room := enginestore.NewRoom(100 * 48) // 100 ids
	a := enginestore.NewListed(room)
	a.Keep()
	need := listAll(t, order, a)
	b := enginestore.NewListed(room)
	b.Keep()
	listAll(t, order, b)
	if n := placedCount(b, need); n != 0 {
		t.Fatalf("a second Listed placed %d ids with the room spent, want 0", n)
	}
	if n := placedCount(a, need); n != 100 {
		t.Fatalf("placed %d ids within a room of 100, want 100", n)
	}
	a.Close()
	b.Close()
	c := enginestore.NewListed(room)
	defer c.Close()
	c.Keep()
	need = listAll(t, order, c)
	if n := placedCount(c, need); n != 100 {
		t.Fatalf("after the others closed, placed %d ids, want 100", n)
	}
}

// A Listed not told to Keep keeps nothing it is told.
func TestListedKeepsNothingUntilTold(t *testing.T) {
	items := placedItems(100)
	l := enginestore.NewListed(enginestore.NewRoom(1 << 20))
	defer l.Close()
	need := listAll(t, placedOrder{&fakeOrder{items: items}}, l)
	at := make([]uint64, len(need))
	l.Places(len(need), func(i int) negentropy.ID { return need[i] }, at)
	for i, a := range at {
		if a != 0 {
			t.Fatalf("id %s: place %d kept before Keep", need[i], a)
		}
	}
}

// Ids asked in another order than listed are placed all the same (the
// run is merged and searched), each once; and the room of those asked for
// is given back, in the order listed or not.
func TestListedPlacesInAnyOrder(t *testing.T) {
	items := placedItems(3000)
	want := map[negentropy.ID]uint64{}
	for i, it := range items {
		want[it.ID] = 1000 + uint64(i)
	}
	orders := map[string]func([]negentropy.ID) []negentropy.ID{
		"as listed": func(ids []negentropy.ID) []negentropy.ID { return ids },
		"reversed": func(ids []negentropy.ID) []negentropy.ID {
			out := make([]negentropy.ID, len(ids))
			for i, d := range ids {
				out[len(ids)-1-i] = d
			}
			return out
		},
		"every other first": func(ids []negentropy.ID) []negentropy.ID {
			var out []negentropy.ID
			for i := 0; i < len(ids); i += 2 {
				out = append(out, ids[i])
			}
			for i := 1; i < len(ids); i += 2 {
				out = append(out, ids[i])
			}
			return out
		},
	}
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			room := enginestore.NewRoom(1 << 20)
			l := enginestore.NewListed(room)
			defer l.Close()
			l.Keep()
			asked := order(listAll(t, placedOrder{&fakeOrder{items: items}}, l))
			if len(asked) != len(items) {
				t.Fatalf("the initiator needs %d ids, want %d", len(asked), len(items))
			}
			// Asked in WANTs of 100.
			for lo := 0; lo < len(asked); lo += 100 {
				part := asked[lo:min(lo+100, len(asked))]
				at := make([]uint64, len(part))
				l.Places(len(part), func(i int) negentropy.ID { return part[i] }, at)
				for i, d := range part {
					if at[i] != want[d] {
						t.Fatalf("id %s: place %d, want %d", d, at[i], want[d])
					}
				}
			}
			// One more look-up gives back what the last merged.
			l.Places(1, func(int) negentropy.ID { return sha256.Sum256([]byte("not listed")) }, make([]uint64, 1))
			left := enginestore.NewListed(room)
			defer left.Close()
			left.Keep()
			got := listAll(t, placedOrder{&fakeOrder{items: items}}, left)
			at := make([]uint64, len(got))
			left.Places(len(got), func(i int) negentropy.ID { return got[i] }, at)
			for i, d := range got {
				if at[i] != want[d] {
					t.Fatalf("after all were asked for, id %s: place %d, want %d (room not given back)", d, at[i], want[d])
				}
			}
		})
	}
}

// A Listed takes its room for a chunk of ids as it starts one, not an id
// at a time: sessions that each list a few ids hold no more than their
// Room between them, the memory their chunks take counted.
func TestListedRoomCountsWholeChunks(t *testing.T) {
	items := placedItems(40)
	room := enginestore.NewRoom(2 * 64 * 48) // two first chunks
	placed := func(l *enginestore.Listed) int {
		return placedCount(l, listAll(t, placedOrder{&fakeOrder{items: items}}, l))
	}
	var ls []*enginestore.Listed
	for range 3 {
		l := enginestore.NewListed(room)
		l.Keep()
		ls = append(ls, l)
		defer l.Close()
	}
	for i, want := range []int{40, 40, 0} {
		if n := placed(ls[i]); n != want {
			t.Fatalf("Listed %d placed %d ids, want %d (a chunk's room each)", i, n, want)
		}
	}
}

// placedCount is how many of need l knows the place of.
func placedCount(l *enginestore.Listed, need []negentropy.ID) int {
	at := make([]uint64, len(need))
	l.Places(len(need), func(i int) negentropy.ID { return need[i] }, at)
	n := 0
	for _, a := range at {
		if a != 0 {
			n++
		}
	}
	return n
}
