package store

import (
	"strings"

	"github.com/minca-go/minca/engine"
)

// named is an error of the store or blob store a person named by its URL,
// from its backend: "store URL: reason", the backend's own name for it
// left out ([engine.Reason]), so it is named once. what is "store" or
// "blob store".
func named(what, url string, err error) error {
	return &engine.StoreError{Subject: what + " " + ShortURL(url), Msg: engine.Reason(err), Err: err}
}

// about is an error met using the store a URL names, not from its
// backend (the mirror's, its index's): "store URL: " and err's text.
func about(what, url string, err error) error {
	return &engine.StoreError{Subject: what + " " + ShortURL(url), Msg: err.Error(), Err: err}
}

// ShortURL is a store URL as errors name it: an s3:// URL without its
// parameters (the endpoint, where it matters — a server unreachable — is
// in the error), the rest as given.
func ShortURL(url string) string {
	if strings.HasPrefix(url, "s3://") {
		url, _, _ = strings.Cut(url, "?")
	}
	return url
}

// noStoreError is a store that must exist and does not. Its text is
// "no store at URL", the URL as given: the backend's own words (a path
// resolved, a marker missing) add nothing a user typing a path needs,
// unless the absence is not proven (say) and the cause is part of the text.
type noStoreError struct {
	url   string
	cause error // the backend's error, if any
	say   bool  // the cause is part of the text
}

func (e *noStoreError) Error() string {
	if e.say && e.cause != nil {
		return "no store at " + e.url + ": " + engine.Reason(e.cause)
	}
	return "no store at " + e.url
}

func (e *noStoreError) Unwrap() []error {
	if e.cause == nil {
		return []error{engine.ErrNoStore}
	}
	return []error{engine.ErrNoStore, e.cause}
}
