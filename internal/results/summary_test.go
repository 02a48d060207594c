package results

import (
	"encoding/json"
	"strings"
	"testing"
)

// A finding says what to set, or, when the run set it, that certctl fails even so.
func TestFindingNamesTheWorkaround(t *testing.T) {
	s, err := Load("../report/testdata/run-pki-finalize")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Findings) != 1 || !strings.Contains(s.Findings[0], "ACME_FINALIZE_WORKAROUND=1 adds the rows") {
		t.Fatalf("findings %q", s.Findings)
	}
	r := s.Scenarios[0].Record
	r.Setup = json.RawMessage(`{"acme_finalize_workaround": true}`)
	if f := findings(s.Scenarios); len(f) != 1 || !strings.Contains(f[0], "the workaround was applied: this certctl fails even with it") {
		t.Errorf("findings with the workaround applied %q", f)
	}
}
