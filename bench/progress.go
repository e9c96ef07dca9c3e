package bench

// Progress is told, as each step of a suite starts, its name and how many
// of the suite's steps are done: for a progress line (`minca bench` draws
// one on stderr). It is called from the goroutine running the suite.
type Progress func(step string, done, total int)

// steps counts a suite's steps for its Progress.
type steps struct {
	f           Progress
	done, total int
}

func newSteps(f Progress, total int) *steps { return &steps{f: f, total: total} }

// next says that the step named starts, the ones before it done.
func (s *steps) next(name string) {
	if s.f != nil {
		s.f(name, s.done, s.total)
	}
	s.done = min(s.done+1, s.total)
}
