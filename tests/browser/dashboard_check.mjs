// Drives the live dashboard of a running roce-engine in headless Chromium (Debian's, through
// playwright-core) and prints what it saw as JSON, for tests/integration/test_dashboard.py:
//   node dashboard_check.mjs URL [SCREENSHOT.png]
// {console_errors, page_errors, updates, chart_points_running: {chart: [n, n later]}, canvases,
//  state_running, state_final, ports: {name: {field: text}}, flows: {...},
//  fabric: null or {links: {name: {util, paused, width, dashed}}, boxes, hidden}}
// The engine must run with run.http_linger_s long enough for the page to see the final numbers.
import { chromium } from 'playwright-core';

const [url, shot] = process.argv.slice(2);
if (!url) {
  console.error('usage: node dashboard_check.mjs URL [SCREENSHOT.png]');
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  // the machine's network is closed: no background connections, no sandbox as root
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
const out = { console_errors: [], page_errors: [], chart_points_running: {} };
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1600 } });
  page.on('console', m => { if (m.type() === 'error') out.console_errors.push(m.text()); });
  page.on('pageerror', e => out.page_errors.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => window.roceDashboard && window.roceDashboard.updates >= 1, null, { timeout: 15000 });
  out.state_running = await page.textContent('#state');

  // while traffic runs, the charts gain points every second
  const points = () => page.evaluate(() => Object.fromEntries(
    Object.entries(window.roceDashboard.charts).map(([k, c]) => [k, c.x.length])));
  const before = await points();
  await page.waitForFunction(n => window.roceDashboard.charts.ports.x.length >= n + 2, before.ports, { timeout: 15000 });
  const after = await points();
  for (const k of Object.keys(before)) out.chart_points_running[k] = [before[k], after[k]];
  out.canvases = await page.evaluate(() => document.querySelectorAll('canvas').length);
  // a fabric's view, while traffic runs: each link's last second, as drawn
  out.fabric = await page.evaluate(() => {
    const f = window.roceDashboard.fabric;
    if (!f) return null;
    const links = {};
    for (const [name, l] of Object.entries(f))
      links[name] = { util: l.util, paused: l.paused, width: Number(l.line.getAttribute('stroke-width')),
                      dashed: l.line.getAttribute('stroke-dasharray') !== 'none' };
    return { links, boxes: document.querySelectorAll('#fabric-view rect').length,
             hidden: document.getElementById('fabric').hidden };
  });

  // the run ends: the page shows the final numbers
  await page.waitForFunction(() => document.querySelector('#state').textContent.startsWith('finished'), null,
                             { timeout: 60000 });
  const n = await page.evaluate(() => window.roceDashboard.updates);
  await page.waitForFunction(k => window.roceDashboard.updates > k, n, { timeout: 5000 });
  out.state_final = await page.textContent('#state');
  out.updates = await page.evaluate(() => window.roceDashboard.updates);
  const table = id => page.evaluate(tid => {
    const rows = {};
    for (const tr of document.querySelectorAll(`#${tid} tbody tr`)) {
      rows[tr.dataset.name] = {};
      for (const td of tr.querySelectorAll('td[data-field]')) rows[tr.dataset.name][td.dataset.field] = td.textContent;
    }
    return rows;
  }, id);
  out.ports = await table('ports');
  out.flows = await table('flows');
  if (shot) await page.screenshot({ path: shot, fullPage: true });
} catch (e) {
  out.failure = String(e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
