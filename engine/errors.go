package engine

import "fmt"

// StoreError is an error about one store (a KV backend's, or a blob
// store) that a person reads on one line: Subject names the store as its
// backend does ("pebble store db", "s3://bkt/p"; "" when the caller names
// it), Msg says what is wrong, in its own words ("damaged: 000123.sst:
// checksum mismatch"). Its text is "Subject: Msg": the sentinel it is an
// instance of (Kind: [ErrCorrupt], [ErrLocked], …) is not spelt out again
// ("minca/engine: corrupt: …"), yet errors.Is(err, Kind) holds, and
// errors.Is and errors.As see Err, the cause.
//
// An opener that names the store its own way — by the URL a person typed —
// says its name and Msg, so the store is named once.
type StoreError struct {
	Subject string
	Msg     string
	Kind    error // a sentinel (this package's or a caller's), or nil
	Err     error // the cause, or nil
}

func (e *StoreError) Error() string {
	if e.Subject == "" {
		return e.Msg
	}
	return e.Subject + ": " + e.Msg
}

// Unwrap gives Kind and Err.
func (e *StoreError) Unwrap() []error {
	var out []error
	for _, x := range []error{e.Kind, e.Err} {
		if x != nil {
			out = append(out, x)
		}
	}
	return out
}

// Errorf is an error of the kind (a sentinel, tested with errors.Is)
// whose text is the message alone, formatted as fmt.Errorf does; a %w in
// format is its cause. It says what happened once, without the
// sentinel's text before it.
func Errorf(kind error, format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	e := &StoreError{Msg: err.Error(), Kind: kind}
	if wrapsSomething(err) {
		e.Err = err
	}
	return e
}

func wrapsSomething(err error) bool {
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return u.Unwrap() != nil
	case interface{ Unwrap() []error }:
		return len(u.Unwrap()) > 0
	}
	return false
}

// Reason is what err says is wrong without naming the store: the Msg of
// the outermost [*StoreError] in its chain that names a Subject, else
// err's whole text. An opener that names the store by its URL says
// "store URL: " + Reason(err).
func Reason(err error) string {
	if se := named(err); se != nil {
		return se.Msg
	}
	return err.Error()
}

// Subject is the Subject of the outermost [*StoreError] in err's chain
// that names one: the store err is about, as it was named; "" when err
// names none (a caller then says which store it was).
func Subject(err error) string {
	if se := named(err); se != nil {
		return se.Subject
	}
	return ""
}

// named is the outermost *StoreError in err's chain with a Subject.
func named(err error) *StoreError {
	if se, ok := err.(*StoreError); ok && se.Subject != "" {
		return se
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if next := u.Unwrap(); next != nil {
			return named(next)
		}
	case interface{ Unwrap() []error }:
		for _, next := range u.Unwrap() {
			if se := named(next); se != nil {
				return se
			}
		}
	}
	return nil
}
