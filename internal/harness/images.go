package harness

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ReadEnvFile reads a compose env file (.env, images/offline.env): KEY=VALUE lines, `#` comments,
// blank lines. Values are taken as written; these files quote nothing.
func ReadEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: not KEY=VALUE: %q", path, n, line)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, sc.Err()
}

// ImagePins maps every image a run uses instead of the one .env pins to that pin: the offline stand-ins
// (IMAGES=offline, images/offline.env), a packaged certctl build (CERTCTL_DIST) and any IMAGE_* the
// caller set. run.json's `images` says what ran; this says what it stood in for. Images that are the
// pin itself are left out, so an upstream run has none. env is the environment compose was given,
// later entries winning, as with exec.
func ImagePins(root string, offline bool, env []string) map[string]string {
	pins, err := ReadEnvFile(filepath.Join(root, ".env"))
	if err != nil {
		return nil
	}
	effective := EffectiveImages(root, offline, env)
	if effective == nil {
		return nil
	}
	out := map[string]string{}
	for _, k := range Knobs {
		if k.Type != "image" || pins[k.Name] == "" {
			continue
		}
		if ran := effective[k.Name]; ran != "" && ran != pins[k.Name] {
			out[ran] = pins[k.Name]
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// EffectiveImages is each image knob's image for a run: .env's pin, the offline stand-in with
// IMAGES=offline, or the environment's own. nil when .env cannot be read.
func EffectiveImages(root string, offline bool, env []string) map[string]string {
	pins, err := ReadEnvFile(filepath.Join(root, ".env"))
	if err != nil {
		return nil
	}
	effective := map[string]string{}
	for k, v := range pins {
		effective[k] = v
	}
	if offline {
		over, err := ReadEnvFile(filepath.Join(root, "images", "offline.env"))
		if err != nil {
			return nil
		}
		for k, v := range over {
			effective[k] = v
		}
	}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && v != "" {
			if _, pinned := pins[k]; pinned {
				effective[k] = v
			}
		}
	}
	return effective
}
