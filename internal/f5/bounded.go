package f5

// boundedMap is a map that forgets its oldest entries past a count (and
// optionally a byte) budget. A load test deploys certificates for hours and
// certctl never deletes the objects of a successful deployment, so an
// unbounded store would grow until the container is killed; a real BIG-IP
// would fill its disk instead, which the stand-in does not try to reproduce.
type boundedMap[V any] struct {
	m     map[string]slot[V]
	order []orderRef // insertion order; refs whose seq no longer matches are stale
	seq   uint64

	maxCount int
	maxBytes int               // 0: no byte budget
	size     func(V) int       // bytes an entry counts for; nil with maxBytes 0
	pinned   func(string) bool // entries still in use are skipped by eviction
	bytes    int
}

type slot[V any] struct {
	v   V
	seq uint64
}

type orderRef struct {
	key string
	seq uint64
}

func newBoundedMap[V any](maxCount, maxBytes int, size func(V) int, pinned func(string) bool) *boundedMap[V] {
	return &boundedMap[V]{m: map[string]slot[V]{}, maxCount: maxCount, maxBytes: maxBytes, size: size, pinned: pinned}
}

func (b *boundedMap[V]) get(k string) (V, bool) {
	s, ok := b.m[k]
	return s.v, ok
}

func (b *boundedMap[V]) len() int { return len(b.m) }

// put stores v and returns what it replaced, for undo.
func (b *boundedMap[V]) put(k string, v V) (old V, had bool) {
	if s, ok := b.m[k]; ok {
		old, had = s.v, true
		b.bytes -= b.sizeOf(s.v)
	}
	b.seq++
	b.m[k] = slot[V]{v: v, seq: b.seq}
	b.bytes += b.sizeOf(v)
	b.order = append(b.order, orderRef{key: k, seq: b.seq})
	b.evict(k)
	b.compact()
	return old, had
}

func (b *boundedMap[V]) del(k string) (old V, had bool) {
	s, ok := b.m[k]
	if !ok {
		return old, false
	}
	delete(b.m, k)
	b.bytes -= b.sizeOf(s.v)
	b.compact()
	return s.v, true
}

// restore undoes a put or del: it puts old back, or removes k if there was
// nothing before.
func (b *boundedMap[V]) restore(k string, old V, had bool) {
	if had {
		b.put(k, old)
	} else {
		b.del(k)
	}
}

func (b *boundedMap[V]) sizeOf(v V) int {
	if b.size == nil {
		return 0
	}
	return b.size(v)
}

func (b *boundedMap[V]) over() bool {
	return len(b.m) > b.maxCount || (b.maxBytes > 0 && b.bytes > b.maxBytes)
}

// evict drops the oldest unpinned entries until the budget holds; keep is
// the entry just stored, which must survive its own put.
func (b *boundedMap[V]) evict(keep string) {
	for scanned, n := 0, len(b.order); b.over() && scanned < n && len(b.order) > 0; scanned++ {
		ref := b.order[0]
		b.order = b.order[1:]
		s, ok := b.m[ref.key]
		if !ok || s.seq != ref.seq {
			continue
		}
		if ref.key == keep || (b.pinned != nil && b.pinned(ref.key)) {
			b.order = append(b.order, ref)
			continue
		}
		delete(b.m, ref.key)
		b.bytes -= b.sizeOf(s.v)
	}
}

// compact drops stale refs once they outnumber live ones, so that a
// create/delete cycle below the budget does not grow order forever.
func (b *boundedMap[V]) compact() {
	if len(b.order) <= 2*len(b.m)+64 {
		return
	}
	live := make([]orderRef, 0, len(b.m))
	for _, ref := range b.order {
		if s, ok := b.m[ref.key]; ok && s.seq == ref.seq {
			live = append(live, ref)
		}
	}
	b.order = live
}
