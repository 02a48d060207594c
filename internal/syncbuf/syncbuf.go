// Package syncbuf is a bytes.Buffer one goroutine may write (a process's output, an event stream) while
// another reads it.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for one writer and any number of readers at once.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
