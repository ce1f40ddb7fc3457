// The operator's dashboard (GET /dashboard?key=ADMIN_KEY): one page with no
// external assets, refreshed every two seconds from GET /admin/stats with
// the same admin key. Figures carry ids (requests, exact-hit-rate,
// semantic-hit-rate, calls-saved, usd-saved, usd-spent, latency-p50...) and
// table rows data-tenant / data-backend, for scripts and tests.
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
  .figures { display: flex; flex-wrap: wrap; gap: 1em; margin-bottom: 2em; }
  .figure { border: 1px solid #ddd; border-radius: 6px; padding: .8em 1.2em; min-width: 9em; }
  .figure b { display: block; font-size: 22px; }
  table { border-collapse: collapse; margin-bottom: 2em; }
  th, td { padding: .3em .8em; border-bottom: 1px solid #eee; text-align: right; }
  th:first-child, td:first-child { text-align: left; }
  #status { color: #888; }
</style>
</head>
<body>
<h1>llmgate gateway <span id="status">loading...</span></h1>
<div class="figures">
  <div class="figure">requests<b id="requests">-</b></div>
  <div class="figure">exact hit rate<b id="exact-hit-rate">-</b></div>
  <div class="figure">semantic hit rate<b id="semantic-hit-rate">-</b></div>
  <div class="figure">calls saved<b id="calls-saved">-</b></div>
  <div class="figure">money saved<b id="usd-saved">-</b></div>
  <div class="figure">money spent<b id="usd-spent">-</b></div>
  <div class="figure">latency p50<b id="latency-p50">-</b></div>
  <div class="figure">latency p90<b id="latency-p90">-</b></div>
  <div class="figure">latency p99<b id="latency-p99">-</b></div>
</div>
<h2>Tenants</h2>
<table><thead><tr><th>tenant</th><th>requests</th><th>exact</th><th>semantic</th><th>miss</th><th>errors</th>
<th>saved USD</th><th>spent USD</th><th>p50 ms</th><th>p99 ms</th></tr></thead><tbody id="tenants"></tbody></table>
<h2>Backends</h2>
<table><thead><tr><th>backend</th><th>calls</th><th>errors</th><th>spent USD</th><th>p50 ms</th><th>p99 ms</th>
</tr></thead>
<tbody id="backends"></tbody></table>
<script>
const key = new URLSearchParams(location.search).get('key') || '';
const percent = x => (100 * x).toFixed(1) + '%';
const usd = x => '$' + x.toFixed(4);
const ms = x => x.toFixed(2) + ' ms';
function set(id, text) { document.getElementById(id).textContent = text; }
function row(cells, attribute, name) {
  const tr = document.createElement('tr');
  tr.setAttribute(attribute, name);
  for (const cell of cells) { const td = document.createElement('td'); td.textContent = cell; tr.appendChild(td); }
  return tr;
}
async function refresh() {
  try {
    const response = await fetch('/admin/stats', { headers: { Authorization: 'Bearer ' + key } });
    if (!response.ok) throw new Error('HTTP ' + response.status);
    const s = await response.json();
    const t = s.total;
    set('requests', t.requests);
    set('exact-hit-rate', percent(t.exact_hit_rate));
    set('semantic-hit-rate', percent(t.semantic_hit_rate));
    set('calls-saved', t.calls_saved);
    set('usd-saved', usd(t.saved_usd));
    set('usd-spent', usd(t.cost_usd));
    set('latency-p50', ms(t.latency_ms.p50));
    set('latency-p90', ms(t.latency_ms.p90));
    set('latency-p99', ms(t.latency_ms.p99));
    document.getElementById('tenants').replaceChildren(...s.tenants.map(x => row(
      [x.name, x.requests, x.exact_hits, x.semantic_hits, x.misses, x.errors, usd(x.saved_usd),
       usd(x.cost_usd), x.latency_ms.p50.toFixed(2), x.latency_ms.p99.toFixed(2)], 'data-tenant', x.name)));
    document.getElementById('backends').replaceChildren(...s.backends.map(x => row(
      [x.name, x.calls, x.errors, usd(x.cost_usd), x.latency_ms.p50.toFixed(2), x.latency_ms.p99.toFixed(2)],
      'data-backend', x.name)));
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
