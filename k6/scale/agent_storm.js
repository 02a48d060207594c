// Scale tier: a heartbeat storm. POST /api/v1/agents/{id}/heartbeat across the agents
// seed/02_agent_fleet.sql wrote, 167/s (5,000 agents every 30 s).
import exec from 'k6/execution';
import { defineScenario } from '../lib/scenario.js';
import { probeCertctl } from '../lib/probe.js';
import { heartbeat, seededIDs } from '../lib/certctl.js';

const s = defineScenario({
  name: 'agent_storm',
  tier: 'scale',
  budget: 'agent_storm',
  load: { executor: 'constant-arrival-rate', rate: 167, preAllocatedVUs: 100, maxVUs: 500 },
  probe: (cfg) => {
    const info = probeCertctl(cfg);
    const ids = seededIDs(cfg, 'agents', 'loadtest-agent-');
    if (ids.length === 0) return exec.test.abort('no loadtest-agent-* agents: the scale seed (seed/02_agent_fleet.sql) has not run');
    return Object.assign(info, { agent_ids: ids });
  },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function (data) {
  const ids = data.agent_ids;
  heartbeat(s.cfg, ids[exec.scenario.iterationInTest % ids.length]);
}
