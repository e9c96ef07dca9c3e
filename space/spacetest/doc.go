// Package spacetest makes random spaces for tests: founders, roles and
// grants, members added and removed concurrently, invites, revokes, forks,
// definitions and rival definitions, and records written with fresh and
// stale seen, by peers that see different parts of the history and sync
// now and then. Test-only: nothing the minca binary links imports it.
package spacetest
