// Package node is a Minca node for one account (DESIGN.md): for now, the
// judge of 02 §9 that the engine applies ([Judge]).
package node
