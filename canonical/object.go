package canonical

// Object is a JSON object as read: its members in input order, names unique.
// The canonical writer sorts them (02 §1); the input order is kept so that a
// value can be shown as it came.
type Object struct {
	Members []Member
}

// Member is one name/value pair of an [Object].
type Member struct {
	Name  string
	Value any
}

// Get returns the value of the member named name, and whether there is one.
func (o *Object) Get(name string) (any, bool) {
	if o == nil {
		return nil, false
	}
	for i := range o.Members {
		if o.Members[i].Name == name {
			return o.Members[i].Value, true
		}
	}
	return nil, false
}

// Has reports whether the object has a member named name.
func (o *Object) Has(name string) bool {
	_, ok := o.Get(name)
	return ok
}

// Len is the number of members.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.Members)
}

// Set replaces the value of the member named name, or appends the member.
func (o *Object) Set(name string, v any) {
	for i := range o.Members {
		if o.Members[i].Name == name {
			o.Members[i].Value = v
			return
		}
	}
	o.Members = append(o.Members, Member{Name: name, Value: v})
}

// Delete removes the member named name, if any, keeping the others' order.
func (o *Object) Delete(name string) {
	for i := range o.Members {
		if o.Members[i].Name == name {
			o.Members = append(o.Members[:i:i], o.Members[i+1:]...)
			return
		}
	}
}

// Clone returns a copy of the object whose member list can be changed without
// touching o. Member values are shared, not copied.
func (o *Object) Clone() *Object {
	if o == nil {
		return nil
	}
	return &Object{Members: append([]Member(nil), o.Members...)}
}

// NewObject builds an object from name/value pairs, for callers writing
// values in Go. It panics on an odd count, a programming error.
func NewObject(pairs ...any) *Object {
	if len(pairs)%2 != 0 {
		panic("canonical.NewObject: odd number of arguments")
	}
	o := &Object{Members: make([]Member, 0, len(pairs)/2)}
	for i := 0; i < len(pairs); i += 2 {
		o.Set(pairs[i].(string), pairs[i+1])
	}
	return o
}

// MarshalJSON writes the object in its canonical form (02 §1), so that
// encoding/json writes an Object as the JSON it is, never as its Go
// fields.
func (o *Object) MarshalJSON() ([]byte, error) { return Marshal(o) }
