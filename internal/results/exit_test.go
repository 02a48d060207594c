package results

import "testing"

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		codes []int
		want  int
	}{
		{nil, 0}, {[]int{0, 0}, 0}, {[]int{0, 99, 0}, 99},
		{[]int{99, 108}, 108}, // an aborted scenario is worse than a breached budget
		{[]int{108, 99}, 108}, {[]int{107, 0}, 107}, {[]int{99, 3, 5}, 3}, {[]int{5, 99}, 5},
		// The machine decided one run's breaches; another's are certctl's.
		{[]int{0, 6}, 6}, {[]int{6, 99}, 99}, {[]int{99, 6}, 99}, {[]int{6, 3}, 3},
	} {
		if got := Verdict(c.codes...); got != c.want {
			t.Errorf("Verdict(%v) = %d, want %d", c.codes, got, c.want)
		}
	}
}

func TestExitMeaning(t *testing.T) {
	for _, e := range ExitCodes {
		if m, ok := ExitMeaning(e.Code); !ok || m != e.Meaning {
			t.Errorf("%d: %q %v", e.Code, m, ok)
		}
	}
	if _, ok := ExitMeaning(42); ok {
		t.Error("42 is no code of ours")
	}
}
