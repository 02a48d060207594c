package harness

import (
	"slices"
	"sort"
	"time"
)

// Read-only views of how TIER's aliases and the runner treat the tiers, so that the docs render these
// facts (internal/docs) instead of restating them.

// DefaultTiers are the tiers TIER=default (make loadtest) runs.
func DefaultTiers() []string { return slices.Clone(defaultTiers) }

// AllExcluded are the tiers TIER=all leaves out, sorted.
func AllExcluded() []string {
	var out []string
	for t, ok := range allExcluded {
		if ok {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// OwnStackEach reports whether each scenario of tier runs on a stack of its own, one after another.
func OwnStackEach(tier string) bool { return sequentialTiers[tier] }

// BulkPool is the bulk-renewal seed a run with bulk_renewal gets when SEED_BULK_CERTS is unset, for
// the given knobs (RATE_BULK_RENEWAL, BATCH_SIZE; nil: their defaults) and duration.
func BulkPool(env map[string]string, duration time.Duration) string {
	return bulkPool(Config{Env: env}, duration)
}

// InventoryProfile is the compose profile of the inventory seeder (seed/inventory/, SEED_INVENTORY).
const InventoryProfile = "inventory"
