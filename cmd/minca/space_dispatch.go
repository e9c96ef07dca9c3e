package main

import "context"

// runSpace dispatches `minca space SUBVERB` to the subverbs that act
// through the node (space_node.go).
func runSpace(ctx context.Context, s *stdio, args []string) error {
	return runSubverb(ctx, s, "space", nodeSpaceSubverbs(), args)
}
