package monitor

// allocWindow remembers the gen0 allocation of recent GCs, for a rate.
type allocWindow struct {
	at    [256]int64 // ns, pause end
	bytes [256]uint64
	next  int
	n     int
}

func (a *allocWindow) add(at int64, b uint64) {
	a.at[a.next], a.bytes[a.next] = at, b
	a.next = (a.next + 1) % len(a.at)
	a.n = min(a.n+1, len(a.at))
}

// since sums what GCs after t reported.
func (a *allocWindow) since(t int64) (sum uint64, gcs int) {
	for i := 0; i < a.n; i++ {
		j := (a.next - 1 - i + len(a.at)) % len(a.at)
		if a.at[j] <= t {
			break
		}
		sum += a.bytes[j]
		gcs++
	}
	return sum, gcs
}
