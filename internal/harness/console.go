package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"
)

// lineWriter hands what is written to emit one whole line at a time; Flush completes a last line
// left without its newline.
type lineWriter struct {
	emit func(line []byte)
	buf  []byte
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		l.emit(l.buf[:i+1])
		l.buf = l.buf[i+1:]
	}
}

func (l *lineWriter) Flush() {
	if len(l.buf) > 0 {
		l.emit(append(l.buf, '\n'))
		l.buf = nil
	}
}

// prefixWriter writes complete lines with a prefix, so parallel k6 outputs stay readable; mu is the
// lock of out it shares with other writers.
type prefixWriter struct{ lineWriter }

func newPrefixWriter(prefix string, out io.Writer, mu *sync.Mutex) *prefixWriter {
	return &prefixWriter{lineWriter{emit: func(line []byte) {
		mu.Lock()
		defer mu.Unlock()
		w := bufio.NewWriter(out)
		w.WriteString(prefix)
		w.Write(line)
		w.Flush()
	}}}
}

// lockedWriter lets stop close the file only once the sampler is not writing.
type lockedWriter struct {
	sync.Mutex
	w      io.Writer
	closed bool
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.Lock()
	defer l.Unlock()
	if l.closed {
		return len(b), nil // the run is over: a last sample has nowhere to go
	}
	return l.w.Write(b)
}

// clock formats seconds into the load as mm:ss.
func clock(s float64) string {
	if s < 0 {
		s = 0
	}
	n := int(s)
	return fmt.Sprintf("%02d:%02d", n/60, n%60)
}
