package admission

// Fair order within a priority: a job's standing is its tenant's use of its share were the job
// admitted, counting the tenant's active jobs and its jobs ahead of this one in dispatch order:
// the larger of jobs ÷ share's jobs and, under a GPU cap, GPUs ÷ share's GPUs (Kueue's and DRF's
// dominant share). Among jobs of one priority the lowest standing goes first, ties to dispatch
// order. A tenant's standing only grows from one of its jobs to the next, so its own jobs keep
// their order, and the run is a merge of each tenant's jobs: n log(tenants), not n log n.

// zeroShare weighs a use of nothing shared: far beyond any ratio to a share, and still ordered
// by how much is used.
const zeroShare = 1 << 40

// standing is use's part of share, the larger of its jobs' and (when gpus) its GPUs'.
func standing(use, share Amount, gpus bool) float64 {
	s := ratio(int64(use.Jobs), int64(share.Jobs))
	if gpus {
		s = max(s, ratio(use.GPUs, share.GPUs))
	}
	return s
}

func ratio(used, share int64) float64 {
	if share <= 0 {
		return float64(max(used, 0)) * zeroShare
	}
	return float64(used) / float64(share)
}

// fairOrder reorders each run of equal priority of order, whose words are as dispatchOrder made
// them, fairly among its tenants.
func fairOrder(order []word, l layout, r *room, ts tenants) {
	if len(order) < 2 || len(ts.share) < 2 {
		return // one tenant: dispatch order is its own order
	}
	keys := make([]float64, len(order))
	seen := make([]Amount, len(ts.share))
	for i, w := range order {
		k := l.index(w)
		t := ts.of[k]
		s := seen[t]
		s.Jobs++
		s.GPUs += r.need(k)
		keys[i] = standing(Amount{ts.used[t].Jobs + s.Jobs, ts.used[t].GPUs + s.GPUs}, ts.share[t], r.gpuCapped)
		if l.verdict(w) == open { // a held job takes no room, so it counts against nobody behind it
			seen[t] = s
		}
	}
	m := newMerger(len(order), len(ts.share))
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && order[end]>>(64-prioBits) == order[start]>>(64-prioBits) {
			end++
		}
		if end-start > 1 {
			m.merge(order[start:end], keys[start:end], l, ts.of)
		}
		start = end
	}
}

// merger merges runs by tenant, reusing its buffers from one run to the next.
type merger struct {
	words   []word
	keys    []float64
	pos     []int32 // each word's place in its run, for ties
	count   []int32 // by tenant
	head    []int32 // by tenant: its next word in the buffers
	end     []int32 // by tenant: past its last word
	present []int32 // the run's tenants
	heap    []int32 // tenants, by their next word's key
}

func newMerger(n, tenants int) *merger {
	return &merger{
		words: make([]word, n), keys: make([]float64, n), pos: make([]int32, n),
		count: make([]int32, tenants), head: make([]int32, tenants), end: make([]int32, tenants),
	}
}

// merge puts run, whose standings are keys, in fair order.
func (m *merger) merge(run []word, keys []float64, l layout, tenantOf []int32) {
	m.present = m.present[:0]
	for _, w := range run {
		t := tenantOf[l.index(w)]
		if m.count[t] == 0 {
			m.present = append(m.present, t)
		}
		m.count[t]++
	}
	if len(m.present) == 1 {
		m.count[m.present[0]] = 0
		return
	}
	at := int32(0)
	for _, t := range m.present {
		m.head[t], m.end[t] = at, at
		at += m.count[t]
		m.count[t] = 0
	}
	for i, w := range run {
		t := tenantOf[l.index(w)]
		j := m.end[t]
		m.words[j], m.keys[j], m.pos[j] = w, keys[i], int32(i)
		m.end[t]++
	}
	m.heap = append(m.heap[:0], m.present...)
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	for i := range run {
		t := m.heap[0]
		run[i] = m.words[m.head[t]]
		if m.head[t]++; m.head[t] == m.end[t] {
			last := len(m.heap) - 1
			m.heap[0] = m.heap[last]
			m.heap = m.heap[:last]
		}
		m.down(0)
	}
}

// less says whether tenant a's next word goes before tenant b's.
func (m *merger) less(a, b int32) bool {
	i, j := m.head[a], m.head[b]
	if m.keys[i] != m.keys[j] {
		return m.keys[i] < m.keys[j]
	}
	return m.pos[i] < m.pos[j]
}

func (m *merger) down(i int) {
	h := m.heap
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && m.less(h[c+1], h[c]) {
			c++
		}
		if !m.less(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
