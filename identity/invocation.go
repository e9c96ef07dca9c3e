package identity

import "github.com/minca-go/minca/canonical"

// Invocation is what a key asks of the note it holds: a command and its
// arguments (01 §8 in our profile). A version invokes /record/write, or
// /record/delete for a delete, in the space it is judged in (02 §9.3, §7).
// Space is that space; "" for a loose version, which no space: note
// reaches. ByCreator is nil when it is not known (a version judged alone),
// and then a policy that reads .byCreator does not hold (see [Policy]).
type Invocation struct {
	Cmd        string
	Space      string
	Collection string
	ByCreator  *bool
	HasBody    bool
	Body       any
}

// Args is the invocation's arguments as a JSON object, what policies select
// into: {space, collection, byCreator?, body?} (02 §7, §9.3). Values are
// shared with the invocation, not copied.
func (inv *Invocation) Args() *canonical.Object {
	o := canonical.NewObject("space", inv.Space, "collection", inv.Collection)
	if inv.ByCreator != nil {
		o.Set("byCreator", *inv.ByCreator)
	}
	if inv.HasBody {
		o.Set("body", inv.Body)
	}
	return o
}
