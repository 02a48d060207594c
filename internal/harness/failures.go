package harness

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// RequestFailures counts k6's per-request warnings ("Request Failed") by kind. When certctl slows down
// k6 prints one per request that got no answer, thousands in a run, and the progress lines drown: the
// scenario's log keeps every one, the console a count, and the first one's words of each kind.
type RequestFailures map[string]int

// FirstFailures are the first error of each kind, as k6 worded it.
type FirstFailures map[string]string

// requestFailedRE matches k6's warning for a request that got no response, and its error's text.
var requestFailedRE = regexp.MustCompile(`level=warning msg="Request Failed" error="((?:[^"\\]|\\.)*)"`)

// FailureKind names why a request got no answer from the text of k6's error.
func FailureKind(err string) string {
	e := strings.ToLower(err)
	switch {
	case strings.Contains(e, "timeout") || strings.Contains(e, "deadline exceeded"):
		return "timeout"
	case strings.Contains(e, "connection refused"):
		return "refused"
	case strings.Contains(e, "connection reset") || strings.Contains(e, "broken pipe") || strings.Contains(e, "eof"):
		return "reset"
	case strings.Contains(e, "no such host") || strings.Contains(e, "lookup "):
		return "dns"
	case strings.Contains(e, "tls") || strings.Contains(e, "x509") || strings.Contains(e, "certificate"):
		return "tls"
	default:
		return "other"
	}
}

// String is the counts, most first: "2700 timeout, 45 refused"; "" for none.
func (f RequestFailures) String() string {
	kinds := make([]string, 0, len(f))
	for k := range f {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if f[kinds[i]] != f[kinds[j]] {
			return f[kinds[i]] > f[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", f[k], k)
	}
	return strings.Join(parts, ", ")
}

// Detail is the counts with the first error of each kind: "9 tls (first: Get "https://nginx/": x509: …)".
func (f RequestFailures) Detail(first FirstFailures) string {
	parts := strings.Split(f.String(), ", ")
	for i, p := range parts {
		_, kind, _ := strings.Cut(p, " ")
		if e := first[kind]; e != "" {
			parts[i] += " (first: " + e + ")"
		}
	}
	return strings.Join(parts, "; ")
}

// failureFilter passes k6's output on line by line, but for its request-failure warnings, which it
// counts instead (count gets the kind and the error's words).
type failureFilter struct{ lineWriter }

func newFailureFilter(out io.Writer, count func(kind, err string)) *failureFilter {
	return &failureFilter{lineWriter{emit: func(l []byte) {
		if m := requestFailedRE.FindSubmatch(l); m != nil {
			e, err := strconv.Unquote(`"` + string(m[1]) + `"`)
			if err != nil {
				e = string(m[1])
			}
			count(FailureKind(e), e)
			return
		}
		out.Write(l)
	}}}
}
