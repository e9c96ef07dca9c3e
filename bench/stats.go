package bench

import "slices"

// median of xs (xs is sorted in place); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// Measure is one benchmark's figures: time and allocations per operation.
type Measure struct {
	NsPerOp     float64 `json:"nsPerOp"`
	AllocsPerOp int64   `json:"allocsPerOp"`
	BytesPerOp  int64   `json:"bytesPerOp"`
}

// medianMeasure takes the median of each figure over rounds.
func medianMeasure(ms []Measure) Measure {
	ns := make([]float64, len(ms))
	al := make([]float64, len(ms))
	by := make([]float64, len(ms))
	for i, m := range ms {
		ns[i], al[i], by[i] = m.NsPerOp, float64(m.AllocsPerOp), float64(m.BytesPerOp)
	}
	return Measure{NsPerOp: median(ns), AllocsPerOp: int64(median(al)), BytesPerOp: int64(median(by))}
}
