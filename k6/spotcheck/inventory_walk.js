// Spot check 2: a full inventory walk, two ways, one after the other.
// (a) page walk: GET /api/v1/certificates?per_page=500&page=N until every certificate is seen (the
//     total comes with the first page): pages, certificates, total time, per-page latency.
// (b) cursor walk: GET /api/v1/certificates?page_size=500, then follow next_cursor. GUARD: on
//     certctl 2026-05 builds the cursor never advances (same page, same cursor:
//     docs/certctl-findings.md#pagination-cursor), so a naive walk loops forever. The walk stops at
//     the first page whose cursor or first id did not advance, the defect's signature, counts it in
//     inventory_cursor_stuck (threshold count==0), fails a check and says so on the console; a page
//     that brought nothing new, or ceil(total/500)+2 pages fetched, stop it too and fail the check
//     without being counted. On those builds this check fails by design.
import http from 'k6/http';
import { check } from 'k6';
import encoding from 'k6/encoding';
import { inventoryWalkMS, inventoryWalkPer1000, inventoryPages, inventoryCertificates, inventoryCursorStuck } from '../lib/metrics.js';
import { defineSpotcheck, params, json, trendValues, countOf, round } from './lib/spotcheck.js';

const PAGE = 500;

const s = defineSpotcheck({
  name: 'inventory_walk',
  iterations: 1,
  latency: 'http_req_duration{walk:page}',
  recorded: ['http_req_duration{walk:cursor}', 'inventory_walk_ms{walk:page}', 'inventory_walk_ms{walk:cursor}',
    'inventory_pages{walk:page}', 'inventory_pages{walk:cursor}', 'inventory_certificates{walk:page}', 'inventory_certificates{walk:cursor}'],
  counters: { page_walk_pages: 'inventory_pages{walk:page}', page_walk_certificates: 'inventory_certificates{walk:page}',
    cursor_walk_pages: 'inventory_pages{walk:cursor}', cursor_walk_certificates: 'inventory_certificates{walk:cursor}', cursor_stuck: 'inventory_cursor_stuck' },
  figures: (data) => {
    const page = trendValues(data, 'http_req_duration{walk:page}');
    const cursor = trendValues(data, 'http_req_duration{walk:cursor}');
    return {
      page_walk_pages: countOf(data, 'inventory_pages{walk:page}'),
      page_walk_certificates: countOf(data, 'inventory_certificates{walk:page}'),
      page_walk_ms: round(trendValues(data, 'inventory_walk_ms{walk:page}').max, 1),
      page_p50_ms: round(page.med, 2),
      page_p95_ms: round(page['p(95)'], 2),
      cursor_walk_pages: countOf(data, 'inventory_pages{walk:cursor}'),
      cursor_walk_certificates: countOf(data, 'inventory_certificates{walk:cursor}'),
      cursor_walk_ms: round(trendValues(data, 'inventory_walk_ms{walk:cursor}').max, 1),
      cursor_p50_ms: round(cursor.med, 2),
      cursor_stuck: countOf(data, 'inventory_cursor_stuck'),
    };
  },
});

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

function get(query, walk) {
  const res = http.get(`${s.cfg.baseUrl}/api/v1/certificates?${query}`,
    params(s.cfg, { phase: 'measured', walk, name: `GET /api/v1/certificates (${walk} walk)` }));
  const body = res.status === 200 ? json(res) : null;
  const ok = check(res, { [`${walk} walk: 200 with a list of certificates`]: () => !!body && Array.isArray(body.data) && typeof body.total === 'number' }, { walk });
  return ok ? body : null;
}

function finish(walk, started, pages, seen, total) {
  const ms = Date.now() - started;
  inventoryWalkMS.add(ms, { walk });
  if (seen.size > 0) inventoryWalkPer1000.add((ms * 1000) / seen.size, { walk });
  inventoryPages.add(pages, { walk });
  inventoryCertificates.add(seen.size, { walk });
  check(null, { [`${walk} walk: saw every certificate`]: () => total > 0 && seen.size >= total }, { walk });
  console.log(`inventory_walk: ${walk} walk: ${pages} page(s), ${seen.size} of ${total} certificates in ${ms} ms`);
}

function pageWalk() {
  const started = Date.now();
  const seen = new Set();
  let total = 0;
  let pages = 0;
  for (let page = 1; ; page++) {
    const body = get(`per_page=${PAGE}&page=${page}`, 'page');
    if (!body) break;
    pages++;
    total = body.total;
    body.data.forEach((c) => seen.add(c.id));
    if (body.data.length === 0 || seen.size >= total || page >= Math.ceil(total / PAGE) + 2) break;
  }
  finish('page', started, pages, seen, total);
}

// The cursor certctl itself hands out: base64url("<created_at RFC 3339 nano>:<id>") of a page's last
// row (151107c, internal/api/handler). Used only when the opening page carries no next_cursor.
function cursorAfter(row) {
  return encoding.b64encode(`${row.created_at}:${row.id}`, 'url');
}

function stuckAt(page, why) {
  inventoryCursorStuck.add(1);
  check(null, { 'cursor walk: every page advances': () => false }, { walk: 'cursor' });
  console.error(`inventory_walk: CURSOR WALK STUCK at page ${page}: ${why}. certctl's cursor never advances on ` +
    '2026-05 builds (docs/certctl-findings.md#pagination-cursor: same page, same cursor; a cursor walk loops forever). Walk stopped; use per_page/page.');
}

function cursorWalk() {
  const started = Date.now();
  const seen = new Set();
  let body = get(`page_size=${PAGE}`, 'cursor');
  let pages = body ? 1 : 0;
  const total = body ? body.total : 0;
  if (body) body.data.forEach((c) => seen.add(c.id));
  if (body && !body.next_cursor && seen.size < total && body.data.length > 0) {
    // certctl's docs say the opening ?page_size= answer carries next_cursor; 151107c answers it in page
    // mode and enters cursor mode only when a cursor is sent.
    check(null, { 'cursor walk: the opening page carries next_cursor': () => false }, { walk: 'cursor' });
    console.warn(`inventory_walk: ?page_size=${PAGE} came back without next_cursor (page mode) although ${total - seen.size} certificates remain; continuing with the cursor certctl would give for its last row`);
    body.next_cursor = cursorAfter(body.data[body.data.length - 1]);
  }
  const maxPages = Math.ceil(total / PAGE) + 2;
  while (body && body.next_cursor && seen.size < total) {
    if (pages >= maxPages) {
      // Advancing but never done: not the defect's signature (the same page again), so not counted.
      check(null, { 'cursor walk: every page advances': () => false }, { walk: 'cursor' });
      console.error(`inventory_walk: cursor walk stopped: ${pages} pages fetched for ${total} certificates (cap reached) with ${seen.size} seen`);
      break;
    }
    const sent = body.next_cursor;
    const firstBefore = body.data.length ? body.data[0].id : '';
    body = get(`page_size=${PAGE}&cursor=${encodeURIComponent(sent)}`, 'cursor');
    if (!body) break;
    pages++;
    const before = seen.size;
    body.data.forEach((c) => seen.add(c.id));
    const first = body.data.length ? body.data[0].id : '';
    if (body.next_cursor === sent || (first !== '' && first === firstBefore)) {
      stuckAt(pages, `sent cursor ${sent.slice(0, 24)}…, got ${body.next_cursor === sent ? 'the same cursor back' : 'another cursor'}; ` +
        `first id ${first} (previous page: ${firstBefore}); ${seen.size - before} new certificates`);
      break;
    }
    if (body.data.length > 0 && seen.size === before) {
      check(null, { 'cursor walk: every page advances': () => false }, { walk: 'cursor' });
      console.error(`inventory_walk: cursor walk stopped at page ${pages}: a new cursor and first row, but no certificate not seen before`);
      break;
    }
  }
  finish('cursor', started, pages, seen, total);
}

export default function () {
  pageWalk();
  cursorWalk();
}
