package carry

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// Wake is an automation of the account's own as a carrier holds it (06
// §4.4): what it can match from the outside of a version alone — its
// space, its collection and whether its root is someone other than the
// account — and the automation's open, to show with a match. A sys.wake
// record in a carry space at "wake:" ‖ the automation's registry key
// without "automation:", body {v: 1, automation, name, collection,
// others, spaces, open}. Its where (06 §2.11) reads bodies, which a
// carrier cannot: the device showing a match checks it.
type Wake struct {
	Automation string   // the sys.automation record's key in the registry
	Name       string   // for people
	Collection string   // when.query.collection
	Others     bool     // only versions whose root is not the account
	Spaces     []string // the spaces it watches; empty: every space carried
	Open       string   // where the app shows a match; "" for its origin's /
}

const wakePrefix = "wake:"

// WakeKey is the sys.wake key of the automation at automationKey; "" when
// none fits a record key.
func WakeKey(automationKey string) string {
	k := wakePrefix + strings.TrimPrefix(automationKey, "automation:")
	if !record.ValidKey(k) {
		return ""
	}
	return k
}

// Value is the wake as a sys.wake body.
func (w Wake) Value() *canonical.Object {
	sp := make([]any, len(w.Spaces))
	for i, s := range w.Spaces {
		sp[i] = s
	}
	return canonical.NewObject("v", float64(1), "automation", w.Automation, "name", w.Name,
		"collection", w.Collection, "others", w.Others, "spaces", sp, "open", w.Open)
}

// Matches reports whether a version wakes w: it is in one of w's spaces,
// in its collection, not a delete, and, with Others, its root is not the
// account's. A carrier knows all of that from the outside of a version.
func (w Wake) Matches(v *record.Version, root, account string) bool {
	if v.Deleted || v.Collection != w.Collection {
		return false
	}
	if len(w.Spaces) > 0 && !slices.Contains(w.Spaces, v.Space) {
		return false
	}
	return !w.Others || root != account
}

// ErrBadWake: a sys.wake or sys.automation body this profile does not
// read.
var ErrBadWake = errors.New("minca/carry: not a wake")

// maxWakeSpaces bounds a wake's spaces (06 §2.11: 1–256 a proposal).
const maxWakeSpaces = 256

// ReadWake reads a sys.wake body.
func ReadWake(body any) (Wake, error) {
	o, ok := body.(*canonical.Object)
	if !ok {
		return Wake{}, fmt.Errorf("%w: a wake is an object", ErrBadWake)
	}
	if v, _ := o.Get("v"); v != float64(1) {
		return Wake{}, fmt.Errorf("%w: v is 1", ErrBadWake)
	}
	var w Wake
	for _, f := range []struct {
		name string
		dst  *string
	}{{"automation", &w.Automation}, {"name", &w.Name}, {"collection", &w.Collection}, {"open", &w.Open}} {
		x, _ := o.Get(f.name)
		s, ok := x.(string)
		if !ok {
			return Wake{}, fmt.Errorf("%w: %s is a string", ErrBadWake, f.name)
		}
		*f.dst = s
	}
	if w.Collection == "" {
		return Wake{}, fmt.Errorf("%w: collection is named", ErrBadWake)
	}
	x, _ := o.Get("others")
	if w.Others, ok = x.(bool); !ok {
		return Wake{}, fmt.Errorf("%w: others is a boolean", ErrBadWake)
	}
	sv, _ := o.Get("spaces")
	if w.Spaces, ok = stringList(sv, maxWakeSpaces); !ok {
		return Wake{}, fmt.Errorf("%w: spaces is a list of at most %d space ids", ErrBadWake, maxWakeSpaces)
	}
	return w, nil
}

// ReadAutomation reads what a carrier can use of a sys.automation record
// of the account's registry, as the account home writes one from a kept
// proposal (06 §2.11; docs/connect.md, Proposals): {name, when: {query:
// {collection, where?}, others?}, then?, spaces?, open?, app?}; others is
// true when absent. Other members are ignored.
func ReadAutomation(key string, body any) (Wake, error) {
	o, ok := body.(*canonical.Object)
	if !ok {
		return Wake{}, fmt.Errorf("%w: an automation is an object", ErrBadWake)
	}
	w := Wake{Automation: key, Others: true}
	if x, ok := o.Get("name"); ok {
		w.Name, _ = x.(string)
	}
	when, _ := o.Get("when")
	wo, ok := when.(*canonical.Object)
	if !ok {
		return Wake{}, fmt.Errorf("%w: when is an object", ErrBadWake)
	}
	q, _ := wo.Get("query")
	qo, ok := q.(*canonical.Object)
	if !ok {
		return Wake{}, fmt.Errorf("%w: when.query is an object", ErrBadWake)
	}
	c, _ := qo.Get("collection")
	if w.Collection, ok = c.(string); !ok || w.Collection == "" {
		return Wake{}, fmt.Errorf("%w: when.query.collection is a collection name", ErrBadWake)
	}
	if x, ok := wo.Get("others"); ok {
		if w.Others, ok = x.(bool); !ok {
			return Wake{}, fmt.Errorf("%w: when.others is a boolean", ErrBadWake)
		}
	}
	if x, ok := o.Get("spaces"); ok {
		if w.Spaces, ok = stringList(x, maxWakeSpaces); !ok {
			return Wake{}, fmt.Errorf("%w: spaces is a list of at most %d space ids", ErrBadWake, maxWakeSpaces)
		}
	}
	if x, ok := o.Get("open"); ok {
		w.Open, _ = x.(string)
	}
	return w, nil
}

func stringList(v any, max int) ([]string, bool) {
	l, ok := v.([]any)
	if !ok || len(l) > max {
		return nil, false
	}
	out := make([]string, len(l))
	for i, x := range l {
		if out[i], ok = x.(string); !ok {
			return nil, false
		}
	}
	return out, true
}
