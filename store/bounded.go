package store

import "sync"

// bounded is a map safe for concurrent use that holds at most its size
// in entries: when full, a put of a new key forgets the oldest key put.
type bounded[V any] struct {
	mu    sync.Mutex
	byKey map[string]V
	order []string // keys, a ring in the order they were added
	next  int      // where the next one goes in order
}

func newBounded[V any](size int) *bounded[V] {
	return &bounded[V]{byKey: make(map[string]V, size), order: make([]string, 0, size)}
}

func (b *bounded[V]) get(key string) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.byKey[key]
	return v, ok
}

// put sets key's value; a key already held keeps its place in the order.
func (b *bounded[V]) put(key string, v V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.byKey[key]; ok {
		b.byKey[key] = v
		return
	}
	if len(b.order) < cap(b.order) {
		b.order = append(b.order, key)
	} else {
		delete(b.byKey, b.order[b.next])
		b.order[b.next] = key
		b.next = (b.next + 1) % len(b.order)
	}
	b.byKey[key] = v
}

// deleteIf deletes key if drop says so of its value. Its slot in the
// order stays until it comes round; a put of the key before then finds no
// entry and takes a second slot, which only makes the map forget sooner.
func (b *bounded[V]) deleteIf(key string, drop func(V) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.byKey[key]; ok && drop(v) {
		delete(b.byKey, key)
	}
}

// len returns how many entries the map holds.
func (b *bounded[V]) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.byKey)
}
