package results

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A failed order's step and answer reach the summary from the raw samples: most first, setup's left
// out; a record that counted no failed step reads nothing.
func TestFailuresByStepAndStatus(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "raw"), 0o755)
	f, err := os.Create(filepath.Join(dir, "raw", "acme_order_flow.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	line := func(step, status, phase string) {
		tags := fmt.Sprintf(`"failed_at":%q,"status":%q`, step, status)
		if phase != "" {
			tags += fmt.Sprintf(`,"phase":%q`, phase)
		}
		fmt.Fprintf(zw, `{"type":"Point","data":{"time":"2026-12-01T21:00:00Z","value":1,"tags":{%s}},"metric":"acme_order_failed"}`+"\n", tags)
	}
	for i := 0; i < 20; i++ {
		line("finalize", "500", "")
	}
	line("account", "400", "")
	line("account", "0", "")
	line("account", "400", "setup")
	fmt.Fprintln(zw, `{"type":"Point","data":{"time":"2026-12-01T21:00:00Z","value":1,"tags":{"failed_at":"finalize"}},"metric":"acme_order_ok"}`)
	zw.Close()
	f.Close()
	rec := &Record{Counters: map[string]float64{"failed_finalize": 20, "failed_account": 2, "finalize_500": 20}}
	want := []Failure{{"finalize", "500", 20}, {"account", "0", 1}, {"account", "400", 1}}
	if got := failures(dir, "acme_order_flow", rec); !reflect.DeepEqual(got, want) {
		t.Errorf("failures %+v, want %+v", got, want)
	}
	if got := failures(dir, "acme_order_flow", &Record{Counters: map[string]float64{"failed_finalize": 0, "finalize_500": 3}}); got != nil {
		t.Errorf("no failed step counted, yet %+v", got)
	}
}
