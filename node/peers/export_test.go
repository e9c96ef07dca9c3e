package peers

import "time"

// SetRecheck sets how often p's sending sessions ask again whether their
// peer may read the space (5 s; 0: before every answer and push), so a
// test decides when a revoke or a removal is seen.
func SetRecheck(p *Peers, d time.Duration) { p.recheck = d }

// IndexBuilds is how many sync-order indexes p's sessions have built.
func IndexBuilds(p *Peers) int64 { return p.feeds.builds.Load() }
