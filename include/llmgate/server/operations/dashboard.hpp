// The operator's dashboard (GET /dashboard?key=ADMIN_KEY): one page with no
// external assets, refreshed every two seconds from GET /admin/stats with
// the same admin key: the figures since start, the last hour minute by
// minute (an SVG chart the page draws: requests answered from a cache and by
// a model, errors, and money spent), and tables of tenants, backends, the
// tenants' spending limits, the router's choices, the PML modules' reused
// tokens and the shared tier's state. Money is shown to four significant
// digits (a call saved reads "$0.000015", not "$0.0000"). Figures carry ids
// (requests, exact-hit-rate, semantic-hit-rate, coalesced, cache-controlled,
// calls-saved, usd-saved, usd-spent, latency-p50..., shared-state) and table
// rows data-tenant, data-backend, data-limit ("tenant/limit"), data-model
// and data-module ("schema/version/module"), for scripts and tests.
#pragma once

#include <string_view>  // std::string_view

namespace llmgate::inline v0 {

inline constexpr std::string_view dashboard_html = R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>llmgate</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 2em; color: #222; }
  h1 { font-size: 20px; margin: 0 0 1em; }
  h2 { font-size: 16px; }
  .figures { display: flex; flex-wrap: wrap; gap: 1em; margin-bottom: 2em; }
  .figure { border: 1px solid #ddd; border-radius: 6px; padding: .8em 1.2em; min-width: 9em; }
  .figure b { display: block; font-size: 22px; }
  table { border-collapse: collapse; margin-bottom: 2em; }
  th, td { padding: .3em .8em; border-bottom: 1px solid #eee; text-align: right; }
  th:first-child, td:first-child { text-align: left; }
  #status, .note { color: #888; }
  #timeline { border: 1px solid #eee; }
  .hits { fill: #3a8; } .misses { fill: #48c; } .errors { fill: #c44; }
  .spend { fill: none; stroke: #e80; stroke-width: 2; }
  .label { fill: #888; font-size: 11px; }
</style>
</head>
<body>
<h1>llmgate gateway <span id="status">loading...</span></h1>
<div class="figures">
  <div class="figure">requests<b id="requests">-</b></div>
  <div class="figure">exact hit rate<b id="exact-hit-rate">-</b></div>
  <div class="figure">semantic hit rate<b id="semantic-hit-rate">-</b></div>
  <div class="figure">coalesced<b id="coalesced">-</b></div>
  <div class="figure">cache-controlled<b id="cache-controlled">-</b></div>
  <div class="figure">calls saved<b id="calls-saved">-</b></div>
  <div class="figure">money saved<b id="usd-saved">-</b></div>
  <div class="figure">money spent<b id="usd-spent">-</b></div>
  <div class="figure">latency p50<b id="latency-p50">-</b></div>
  <div class="figure">latency p90<b id="latency-p90">-</b></div>
  <div class="figure">latency p99<b id="latency-p99">-</b></div>
</div>
<h2>Last hour</h2>
<p class="note">Each minute: answered from a cache (green), by a model (blue), failed (red); the line is money spent.</p>
<svg id="timeline" width="720" height="170" viewBox="0 0 720 170" role="img"
     aria-label="requests and spending per minute over the last hour"></svg>
<h2>Tenants</h2>
<table><thead><tr><th>tenant</th><th>requests</th><th>exact</th><th>semantic</th><th>coalesced</th><th>miss</th>
<th>errors</th><th>cache-controlled</th><th>saved USD</th><th>spent USD</th><th>p50 ms</th><th>p99 ms</th></tr></thead>
<tbody id="tenants"></tbody></table>
<h2>Backends</h2>
<table><thead><tr><th>backend</th><th>calls</th><th>errors</th><th>spent USD</th><th>p50 ms</th><th>p99 ms</th>
</tr></thead>
<tbody id="backends"></tbody></table>
<h2>Spending limits</h2>
<table><thead><tr><th>tenant</th><th>limit</th><th>used</th><th>of</th><th>remaining</th><th>resets</th>
<th>refused</th></tr></thead>
<tbody id="limits"></tbody></table>
<h2>Router</h2>
<table><thead><tr><th>model</th><th>requests routed</th></tr></thead><tbody id="routed"></tbody></table>
<h2>Prompt modules</h2>
<table><thead><tr><th>schema</th><th>module</th><th>prompts</th><th>reused tokens</th><th>computed tokens</th>
</tr></thead>
<tbody id="modules"></tbody></table>
<h2>Shared tier</h2>
<p id="shared-state">-</p>
<script>
const key = new URLSearchParams(location.search).get('key') || '';
const percent = x => (100 * x).toFixed(1) + '%';
const ms = x => x.toFixed(2) + ' ms';
// Four significant digits, two decimals at least, never an exponent.
function usd(x) {
  const decimals = x > 0 && x < 1 ? Math.min(12, 3 - Math.floor(Math.log10(x))) : 2;
  let text = x.toFixed(decimals);
  const keep = text.indexOf('.') + 3;
  while (text.length > keep && text.endsWith('0')) text = text.slice(0, -1);
  return '$' + text;
}
function set(id, text) { document.getElementById(id).textContent = text; }
function row(cells, attribute, name) {
  const tr = document.createElement('tr');
  tr.setAttribute(attribute, name);
  for (const cell of cells) { const td = document.createElement('td'); td.textContent = cell; tr.appendChild(td); }
  return tr;
}
function rows(id, list) {
  const body = document.getElementById(id);
  if (list.length) { body.replaceChildren(...list); return; }
  const tr = document.createElement('tr'), td = document.createElement('td');
  td.textContent = 'none';
  td.className = 'note';
  tr.appendChild(td);
  body.replaceChildren(tr);
}
function svg(name, attributes, text) {
  const element = document.createElementNS('http://www.w3.org/2000/svg', name);
  for (const [k, v] of Object.entries(attributes)) element.setAttribute(k, v);
  if (text !== undefined) element.textContent = text;
  return element;
}
// Sixty minutes, a bar each: cache answers on model answers on failures;
// the money spent as a line over them, scaled to the hour's most.
function drawTimeline(minutes) {
  const width = 12, bottom = 150, height = 130;
  const most = Math.max(1, ...minutes.map(m => m.hits + m.misses + m.errors));
  const spent = Math.max(...minutes.map(m => m.cost_usd));
  const parts = [];
  let line = '';
  minutes.forEach((m, i) => {
    let y = bottom;
    for (const [count, kind] of [[m.errors, 'errors'], [m.misses, 'misses'], [m.hits, 'hits']]) {
      if (!count) continue;
      const h = height * count / most;
      y -= h;
      parts.push(svg('rect', { x: i * width + 1, y: y, width: width - 2, height: h, class: kind,
                               'data-minute': m.minute }));
    }
    line += (i ? ' ' : '') + (i * width + width / 2) + ',' + (spent > 0 ? bottom - height * m.cost_usd / spent : bottom);
  });
  parts.push(svg('polyline', { points: line, class: 'spend' }));
  parts.push(svg('text', { x: 0, y: 166, class: 'label' }, '60 min ago'));
  parts.push(svg('text', { x: 720, y: 166, class: 'label', 'text-anchor': 'end' }, 'now'));
  parts.push(svg('text', { x: 0, y: 12, class: 'label' }, most + ' requests'));
  parts.push(svg('text', { x: 720, y: 12, class: 'label', 'text-anchor': 'end' }, usd(spent) + ' a minute'));
  document.getElementById('timeline').replaceChildren(...parts);
}
const limitCell = (limit, x) => limit === 'budget' ? usd(x) : Math.round(x).toString();
async function refresh() {
  try {
    const response = await fetch('/admin/stats', { headers: { Authorization: 'Bearer ' + key } });
    if (!response.ok) throw new Error('HTTP ' + response.status);
    const s = await response.json();
    const t = s.total;
    set('requests', t.requests);
    set('exact-hit-rate', percent(t.exact_hit_rate));
    set('semantic-hit-rate', percent(t.semantic_hit_rate));
    set('coalesced', t.coalesced);
    set('cache-controlled', t.cache_controlled);
    set('calls-saved', t.calls_saved);
    set('usd-saved', usd(t.saved_usd));
    set('usd-spent', usd(t.cost_usd));
    set('latency-p50', ms(t.latency_ms.p50));
    set('latency-p90', ms(t.latency_ms.p90));
    set('latency-p99', ms(t.latency_ms.p99));
    drawTimeline(s.timeline);
    rows('tenants', s.tenants.map(x => row(
      [x.name, x.requests, x.exact_hits, x.semantic_hits, x.coalesced, x.misses, x.errors, x.cache_controlled,
       usd(x.saved_usd), usd(x.cost_usd), x.latency_ms.p50.toFixed(2), x.latency_ms.p99.toFixed(2)],
      'data-tenant', x.name)));
    rows('backends', s.backends.map(x => row(
      [x.name, x.calls, x.errors, usd(x.cost_usd), x.latency_ms.p50.toFixed(2), x.latency_ms.p99.toFixed(2)],
      'data-backend', x.name)));
    rows('limits', (s.spending ? s.spending.tenants : []).flatMap(x => Object.entries(x.limits).map(([limit, l]) => row(
      [x.name, limit, limitCell(limit, l.used), limitCell(limit, l.limit), limitCell(limit, l.remaining),
       new Date(l.resets_at * 1000).toISOString().replace('.000Z', 'Z'), l.refusals],
      'data-limit', x.name + '/' + limit))));
    rows('routed', Object.entries(s.routed || {}).map(([model, count]) => row([model, count], 'data-model', model)));
    rows('modules', s.prompts.modules.map(m => row(
      [m.schema + ' ' + m.version, m.module, m.prompts, m.reused_tokens, m.computed_tokens],
      'data-module', m.schema + '/' + m.version + '/' + m.module)));
    const shared = s.shared;
    set('shared-state', !shared ? 'not configured' : (shared.available ? 'available' : 'away: ' + shared.detail) +
        '; ' + shared.round_trips + ' round trips, ' + shared.errors + ' errors, replication lag ' +
        shared.replication_lag_ms.toFixed(1) + ' ms' +
        (s.spending ? '; spending synced with ' + s.spending.replicas + ' replica(s)' +
                      (s.spending.store_away ? ', each held to its share' : '') : ''));
    set('status', 'up ' + Math.round(s.uptime_s) + ' s');
  } catch (e) {
    set('status', 'stats unavailable: ' + e.message);
  }
}
refresh();
setInterval(refresh, 2000);
</script>
</body>
</html>
)html";

}  // namespace llmgate::inline v0
