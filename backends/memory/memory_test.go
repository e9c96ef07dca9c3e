package memory_test

import (
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

func TestSuite(t *testing.T) {
	enginetest.Run(t, func(t *testing.T) engine.KV { return memory.Open(nil) })
}
