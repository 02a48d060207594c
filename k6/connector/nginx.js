// Connector tier: TLS handshakes against the nginx target, a fresh connection per iteration,
// 100 connections per minute by default (RATE_NGINX, per minute).
import { defineScenario } from '../lib/scenario.js';
import { connectorSpec, handshake } from '../lib/connector.js';

const c = connectorSpec('nginx', {
  executor: 'constant-arrival-rate', rate: 100, timeUnit: '1m', preAllocatedVUs: 5, maxVUs: 100,
});
const s = defineScenario(c.spec);

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;
export default function () {
  handshake(s.cfg, c.target);
}
