// Growth tier: agents' work polls (GET /api/v1/agents/{id}/work) across every agent certctl lists,
// 10/s by default: 300 agents polling every 30 s, certctl's agent default. One of the growth mix's
// operations (docs/growth.md): the poll's query walks the jobs, targets and mappings, which grow with
// the inventory. The admin key polls for each agent (certctl's RBAC lets it); the seeded agents hold no
// key of their own (seed/inventory/01_inventory.sql).
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { probeCertctl } from '../lib/probe.js';
import { agentWork, registerAgent, seededIDs, setupParams } from '../lib/certctl.js';

const s = defineScenario({
  name: 'agent_work',
  tier: 'growth',
  budget: 'agent_work',
  load: { executor: 'constant-arrival-rate', rate: 10, preAllocatedVUs: 20, maxVUs: 200 },
  probe: (cfg) => {
    const info = probeCertctl(cfg);
    let ids = seededIDs(cfg, 'agents', '');
    // A stack without an inventory (TIER=growth alone, the workflow's dispatch) has no agent: ten of
    // its own, with no work waiting, poll the same query.
    if (ids.length === 0) {
      const p = setupParams(cfg);
      ids = Array.from({ length: 10 }, (_, i) => registerAgent(cfg, `lt-work-${cfg.runId}-${i + 1}`, p));
    }
    return Object.assign(info, { agent_ids: ids });
  },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  const ids = data.agent_ids;
  agentWork(s.cfg, ids[exec.scenario.iterationInTest % ids.length]);
}
