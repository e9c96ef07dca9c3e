package node

import (
	"context"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/space"
)

// What [Node.SpaceState] reads of a space: its lines as `minca space …`
// prints them (space.ShowObject and the rest).
const (
	StateShow        = "show"
	StateMembers     = "members"
	StateRoles       = "roles"
	StateDefinitions = "definitions"
	StateHistory     = "history"
)

// SpaceState is a space's state as JSON lines (docs/spaces.md): part is
// one of StateShow, StateMembers, StateRoles, StateDefinitions and
// StateHistory; asOf, when not empty, the access changes to read it as of
// (with everything they saw), else every change held. A space the node
// does not keep, or an asOf change it does not hold, is a *WriteError.
func (n *Node) SpaceState(ctx context.Context, spaceID, part string, asOf []string) ([]*canonical.Object, error) {
	var out []*canonical.Object
	ok, err := n.judge.WithHistory(ctx, spaceID, func(h *space.History) error {
		st := h.Now()
		if len(asOf) > 0 {
			var err error
			if st, err = h.At(asOf); err != nil {
				return writeErr(CodeNotFound, "asOf", err.Error())
			}
		}
		switch part {
		case StateShow:
			out = []*canonical.Object{space.ShowObject(h, st)}
		case StateMembers:
			out = space.MemberObjects(st)
		case StateRoles:
			out = space.RoleObjects(st)
		case StateDefinitions:
			out = space.DefinitionObjects(h, st)
		case StateHistory:
			out = space.ChangeObjects(h, st)
		default:
			return writeErr(CodeBadInput, "part", "a space's state is one of show, members, roles, definitions, history, not "+strings.TrimSpace(part))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, writeErr(CodeSpaceNotKept, "space", "the node does not keep the space "+spaceID)
	}
	return out, nil
}
