package peers

// IndexBuilds is how many sync-order indexes p's sessions have built.
func IndexBuilds(p *Peers) int64 { return p.feeds.builds.Load() }
