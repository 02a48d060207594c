package history

import (
	"encoding/json"
	"fmt"
)

// MaxPValue is the significance a change point needs: weekly series are short (a quarter is 13 weeks),
// so Otava's own default for long series (0.001) would find no step at all in them.
const MaxPValue = 0.05

// Window is Otava's sliding window, in weeks: longer than a year of weeks, so a series is judged whole.
const Window = 60

// OtavaDetector finds change points with Apache Otava (tools/otava/changepoints.py): run starts the
// script with its request on stdin and returns its stdout.
func OtavaDetector(run func(stdin []byte) ([]byte, error)) Detector {
	return func(series map[string][]float64) (map[string][]ChangePoint, error) {
		req, err := json.Marshal(map[string]any{"max_pvalue": MaxPValue, "window": Window, "series": series})
		if err != nil {
			return nil, err
		}
		b, err := run(req)
		if err != nil {
			return nil, err
		}
		var out map[string][]ChangePoint
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, fmt.Errorf("tools/otava/changepoints.py answered %q: %w", b, err)
		}
		return out, nil
	}
}
