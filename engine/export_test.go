package engine

// Layout is the key layout this engine writes.
const Layout = layout

// Layout6State turns the engine's counters as this layout keeps them into
// those of layout 6, for the test of the upgrade.
func Layout6State(b []byte) ([]byte, error) {
	c, err := decodeCounters(b)
	if err != nil {
		return nil, err
	}
	c.stats.WaitingBytes, c.stats.WaitingDropped, c.stats.WaitingExpired = 0, 0, 0
	n := c.encode()
	// Layout 6 had no waiting bytes, dropped or expired: the three
	// varints (zero: one byte each) before the index's length.
	cut := len(n) - len(c.index) - uvarintLen(uint64(len(c.index))) - 3
	out := append([]byte{6}, n[1:cut]...)
	return append(out, n[cut+3:]...), nil
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}
