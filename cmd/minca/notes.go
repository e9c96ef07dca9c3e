package main

import (
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// noteChecker is what judges the notes versions carry as proof: identity's
// profile of 01's notes. One per run, so a note many versions carry is
// verified once.
func noteChecker() record.NoteChecker {
	return &identity.Checker{Resolver: &identity.Resolver{}}
}
