// roce-engine live dashboard: reads /api/run once (what runs) and /metrics every second (the
// Prometheus text the engine serves), turns counters into per-second rates from the engine's own
// clock (roce_run_elapsed_seconds) and latency histograms into percentiles of the last second,
// fills the tables and the uPlot charts, and with a fabric draws its links by use and pauses.
// Everything it shows is a metric of
// docs/monitoring.md#metrics; nothing is computed that the report does not also have.
'use strict';

const POLL_MS = 1000;
const WINDOW_POINTS = 300; // five minutes at one point per second

// ---- the Prometheus text format ------------------------------------------------------------

// name -> [{labels: {k: v}, value}]
function parseMetrics(text) {
  const out = new Map();
  const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)$/;
  const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (const l of text.split('\n')) {
    if (!l || l[0] === '#') continue;
    const m = line.exec(l);
    if (!m) continue;
    const labels = {};
    if (m[2]) for (const x of m[2].matchAll(label)) labels[x[1]] = x[2];
    if (!out.has(m[1])) out.set(m[1], []);
    out.get(m[1]).push({ labels, value: Number(m[3]) });
  }
  return out;
}

// The sum of the samples of `name` whose labels include `match`.
function metric(m, name, match = {}) {
  let sum = 0, found = false;
  for (const s of m.get(name) || []) {
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) { sum += s.value; found = true; }
  }
  return found ? sum : null;
}

// ---- charts that grow new series as they appear ----------------------------------------------

class LiveChart {
  constructor(id, axes) {
    this.el = document.getElementById(id);
    this.axes = axes || [{}];
    this.keys = []; this.opts = {}; this.x = []; this.cols = {}; this.plot = null;
    this.el.classList.add('empty');
  }
  // values: {key: number | null}; options of a new key: {scale, label}
  push(t, values, seriesOpts = {}) {
    let rebuild = false;
    for (const k of Object.keys(values)) {
      if (!(k in this.cols)) {
        this.keys.push(k); this.opts[k] = seriesOpts[k] || {};
        this.cols[k] = this.x.map(() => null); rebuild = true;
      }
    }
    this.x.push(t);
    for (const k of this.keys) this.cols[k].push(k in values ? values[k] : null);
    if (this.x.length > WINDOW_POINTS) { this.x.shift(); for (const k of this.keys) this.cols[k].shift(); }
    if (!this.keys.length) return;
    this.el.classList.remove('empty');
    const data = [this.x, ...this.keys.map(k => this.cols[k])];
    if (rebuild || !this.plot) this.build(data); else this.plot.setData(data);
  }
  build(data) {
    if (this.plot) this.plot.destroy();
    const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
                     '#bcbd22', '#17becf'];
    const scales = { x: { time: false } };
    const axes = [{ label: 'seconds' }];
    this.axes.forEach((a, i) => { const s = a.scale || 'y'; scales[s] = {}; axes.push({ scale: s, side: i ? 1 : 3, label: a.label || '' }); });
    this.plot = new uPlot({
      width: Math.max(this.el.clientWidth - 16, 300), height: 240, scales, axes,
      series: [{ label: 't (s)' }, ...this.keys.map((k, i) => ({
        label: k, stroke: palette[i % palette.length], width: 1.5, scale: this.opts[k].scale || 'y',
        spanGaps: false,
      }))],
    }, data, this.el);
  }
}

// ---- the page -------------------------------------------------------------------------------

const dash = {
  run: null, prev: null, updates: 0, lastMetrics: null, charts: {}, fabric: null,
};
window.roceDashboard = dash; // tests read it (updates, lastMetrics, charts, fabric)

function fmt(v, digits = 3) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  if (Math.abs(v) >= 1e6 || Number.isInteger(v)) return String(Math.round(v));
  return v.toFixed(digits);
}

// A table body with one row per name; cells addressed by data-field.
function renderRows(tableId, rows, fields) {
  const body = document.querySelector(`#${tableId} tbody`);
  for (const [name, values] of rows) {
    let tr = body.querySelector(`tr[data-name="${name}"]`);
    if (!tr) {
      tr = document.createElement('tr');
      tr.dataset.name = name;
      tr.innerHTML = `<td>${name}</td>` + fields.map(f => `<td data-field="${f}"></td>`).join('');
      body.appendChild(tr);
    }
    for (const f of fields) tr.querySelector(`td[data-field="${f}"]`).textContent = fmt(values[f]);
  }
}

// Per second since the previous poll; once the run finished (its clock stopped), the average over
// the whole run, which is what the report gives.
function rate(m, prev, dt, name, match) {
  if (metric(m, 'roce_run_active') === 0) {
    const total = metric(m, name, match), t = metric(m, 'roce_run_elapsed_seconds');
    return total === null || !t ? null : total / t;
  }
  if (!prev || dt <= 0) return null;
  const now = metric(m, name, match), was = metric(prev, name, match);
  return now === null || was === null ? null : Math.max(0, now - was) / dt;
}

function latencyKind(m, flow) {
  for (const kind of ['oneway', 'rtt', 'ack'])
    if (metric(m, 'roce_flow_latency_seconds_count', { flow, kind }) !== null) return kind;
  return null;
}

// The q-quantile of histogram `name` (its _bucket samples whose labels include `match`), as
// Prometheus's histogram_quantile computes it: linear within the bucket that holds the rank, the
// highest finite bound if that is +Inf. Over the samples since the previous poll while the run
// goes on (a windowed percentile); over the whole run once it finished. null without samples.
function histogramQuantile(m, prev, name, match, q) {
  const counts = (mm) => {
    const out = new Map();
    for (const s of mm.get(`${name}_bucket`) || []) {
      if (!Object.entries(match).every(([k, v]) => s.labels[k] === v)) continue;
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      out.set(le, (out.get(le) || 0) + s.value);
    }
    return out;
  };
  const now = counts(m);
  if (metric(m, 'roce_run_active') !== 0 && prev) {
    const was = counts(prev);
    for (const [le, v] of now) now.set(le, Math.max(0, v - (was.get(le) || 0)));
  }
  const bounds = [...now.keys()].sort((a, b) => a - b);
  const total = now.get(Infinity) || 0;
  if (!total) return null;
  const rank = q * total;
  let lower = 0, below = 0;
  for (const le of bounds) {
    const cum = now.get(le);
    if (cum >= rank) {
      if (le === Infinity) return lower;
      return cum === below ? le : lower + (le - lower) * (rank - below) / (cum - below);
    }
    lower = le; below = cum;
  }
  return lower;
}

// ---- the fabric: its switches by tier, each link by its use and pauses --------------------------

const SVG = 'http://www.w3.org/2000/svg';
const TIER_ROW = { core: 0, spine: 1, leaf: 2, nic: 3 };

function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// Lays the fabric out once: a row per tier (NICs at the bottom), each row spread over the width.
function drawFabric(fabric) {
  const svg = document.getElementById('fabric-view');
  document.getElementById('fabric').hidden = false;
  const tierOf = Object.fromEntries(fabric.switches.map(s => [s.name, s.tier]));
  const rows = [[], [], [], []];
  for (const s of fabric.switches) rows[TIER_ROW[s.tier] ?? 2].push(s.name);
  for (const l of fabric.links) if (!(l.b in tierOf) && !rows[3].includes(l.b)) rows[3].push(l.b);
  const used = rows.filter(r => r.length), width = 1000, height = 360, pos = {};
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  used.forEach((row, i) => row.forEach((name, j) => {
    pos[name] = [(j + 0.5) * width / row.length, 30 + i * (height - 60) / Math.max(1, used.length - 1)];
  }));
  const links = {};
  for (const l of fabric.links) {
    const [x1, y1] = pos[l.a], [x2, y2] = pos[l.b];
    const line = svgEl('line', { x1, y1, x2, y2, stroke: '#9c9', 'stroke-width': 1, 'data-link': l.name });
    line.appendChild(svgEl('title', {})).textContent = l.name;
    svg.appendChild(line);
    links[l.name] = { line, gbps: l.gbps, util: 0, paused: 0 };
  }
  for (const [name, [x, y]] of Object.entries(pos)) {
    const nic = !(name in tierOf), w = Math.max(36, 8 * name.length);
    svg.appendChild(svgEl('rect', { x: x - w / 2, y: y - 10, width: w, height: 20, rx: 4, class: nic ? 'nic' : 'switch' }));
    svg.appendChild(svgEl('text', { x, y })).textContent = name;
  }
  return links;
}

// Each link's busier direction over the last second: its share of the link's rate (frame bytes)
// and of the time its sender was paused; the line's width and colour, dashed when paused > 5 %.
function updateFabric(m, pm, dt) {
  if (!dash.fabric || !(dt > 0)) return;
  const busiest = {};
  for (const s of m.get('roce_fabric_link_tx_bytes_total') || []) {
    const { link, from, to } = s.labels, l = dash.fabric[link];
    if (!l) continue;
    const q = { link, from, to };
    const util = (rate(m, pm, dt, 'roce_fabric_link_tx_bytes_total', q) || 0) * 8 / (l.gbps * 1e9);
    const paused = rate(m, pm, dt, 'roce_fabric_link_paused_seconds_total', q) || 0;
    const b = busiest[link] || (busiest[link] = { util: 0, paused: 0 });
    b.util = Math.max(b.util, util); b.paused = Math.max(b.paused, paused);
  }
  for (const [name, b] of Object.entries(busiest)) {
    const l = dash.fabric[name], u = Math.min(1, Math.max(0, b.util));
    l.util = b.util; l.paused = b.paused;
    l.line.setAttribute('stroke-width', (1 + 7 * u).toFixed(1));
    l.line.setAttribute('stroke', `hsl(${Math.round(120 * (1 - u))}, 70%, 42%)`);
    l.line.setAttribute('stroke-dasharray', b.paused > 0.05 ? '6 4' : 'none');
    l.line.dataset.util = b.util.toFixed(3); l.line.dataset.paused = b.paused.toFixed(3);
  }
}

function update(m) {
  const t = metric(m, 'roce_run_elapsed_seconds') || 0;
  const active = metric(m, 'roce_run_active') === 1;
  const prev = dash.prev, dt = prev ? t - prev.t : 0, pm = prev ? prev.m : null;
  const state = document.getElementById('state');
  state.textContent = active ? 'running' : 'finished: final numbers';
  state.className = 'state ' + (active ? 'running' : 'finished');
  document.getElementById('elapsed').textContent = `${t.toFixed(1)} s`;

  const portRows = [], portRates = {}, cnp = {}, pfc = {}, sw = {};
  for (const p of dash.run.ports) {
    const q = { port: p.name };
    const v = {
      link_gbps: p.link_gbps,
      tx_gbps: rate(m, pm, dt, 'roce_port_tx_bytes_total', q), rx_gbps: rate(m, pm, dt, 'roce_port_rx_bytes_total', q),
      tx_packets: metric(m, 'roce_port_tx_packets_total', q), rx_packets: metric(m, 'roce_port_rx_packets_total', q),
      rx_dropped: metric(m, 'roce_port_rx_dropped_packets_total', q),
      cnp_rx: metric(m, 'roce_port_rx_cnp_packets_total', q), cnp_tx: metric(m, 'roce_port_tx_cnp_packets_total', q),
      ecn_ce_rx: metric(m, 'roce_port_rx_ecn_ce_packets_total', q),
      pfc_rx: metric(m, 'roce_port_rx_pfc_packets_total', q), pfc_tx: metric(m, 'roce_port_tx_pfc_packets_total', q),
    };
    for (const k of ['tx_gbps', 'rx_gbps']) if (v[k] !== null) v[k] *= 8e-9;
    portRows.push([p.name, v]);
    if (v.tx_gbps !== null) { portRates[`${p.name} tx`] = v.tx_gbps; portRates[`${p.name} rx`] = v.rx_gbps; }
    const c = rate(m, pm, dt, 'roce_port_rx_cnp_packets_total', q);
    const ce = rate(m, pm, dt, 'roce_port_rx_ecn_ce_packets_total', q);
    if (c !== null && (c > 0 || ce > 0 || `${p.name} CNP rx` in dash.charts.cnp.cols)) {
      cnp[`${p.name} CNP rx`] = c; cnp[`${p.name} ECN CE rx`] = ce;
    }
    for (let k = 0; k < 8; k++) {
      const paused = rate(m, pm, dt, 'roce_port_tx_pfc_paused_seconds_total', { port: p.name, priority: String(k) });
      const key = `${p.name} prio ${k}`;
      if (paused !== null && (paused > 0 || key in dash.charts.pfc.cols)) pfc[key] = paused * 100;
    }
  }
  for (const s of m.get('roce_switch_queue_bytes') || []) {
    const key = `${s.labels.port} tc ${s.labels.tc}`;
    if (s.value > 0 || key in dash.charts.sw.cols) sw[key] = s.value / 1024;
  }
  const marked = rate(m, pm, dt, 'roce_switch_tx_ecn_marked_packets_total');
  if (marked !== null && (marked > 0 || 'switch ECN marked' in dash.charts.cnp.cols)) cnp['switch ECN marked'] = marked;
  renderRows('ports', portRows, ['link_gbps', 'tx_gbps', 'rx_gbps', 'tx_packets', 'rx_packets', 'rx_dropped',
                                 'cnp_rx', 'cnp_tx', 'ecn_ce_rx', 'pfc_rx', 'pfc_tx']);

  const flowRows = [], flowRates = {}, lat = {}, cc = {}, ccOpts = {};
  for (const f of dash.run.flows) {
    const q = { flow: f.name }, kind = latencyKind(m, f.name);
    const v = {
      qps: f.qps, tx_gbps: rate(m, pm, dt, 'roce_flow_tx_bytes_total', q),
      goodput_gbps: rate(m, pm, dt, 'roce_flow_rx_payload_bytes_total', q),
      tx_packets: metric(m, 'roce_flow_tx_packets_total', q), rx_packets: metric(m, 'roce_flow_rx_packets_total', q),
      lost: metric(m, 'roce_flow_rx_lost_packets_total', q),
      retransmits: metric(m, 'roce_flow_tx_retransmitted_packets_total', q),
      cnp_rx: metric(m, 'roce_flow_rx_cnp_packets_total', q),
      p50_us: kind ? histogramQuantile(m, pm, 'roce_flow_latency_seconds', { flow: f.name, kind }, 0.5) : null,
      p99_us: kind ? histogramQuantile(m, pm, 'roce_flow_latency_seconds', { flow: f.name, kind }, 0.99) : null,
      cc_gbps: metric(m, 'roce_cc_rate_sum_bytes_per_second', q),
    };
    for (const k of ['p50_us', 'p99_us']) if (v[k] !== null) v[k] *= 1e6;
    if (v.cc_gbps !== null) v.cc_gbps *= 8e-9;
    for (const k of ['tx_gbps', 'goodput_gbps']) if (v[k] !== null) v[k] *= 8e-9;
    flowRows.push([f.name, v]);
    if (v.tx_gbps !== null) flowRates[f.name] = v.tx_gbps;
    if (kind) { lat[`${f.name} p50 (${kind})`] = v.p50_us; lat[`${f.name} p99 (${kind})`] = v.p99_us; }
    if (v.cc_gbps !== null) {
      cc[`${f.name} rate`] = v.cc_gbps;
      cc[`${f.name} α qp0`] = metric(m, 'roce_cc_qp_alpha', { flow: f.name, qp: '0' });
      ccOpts[`${f.name} α qp0`] = { scale: 'alpha' };
    }
  }
  renderRows('flows', flowRows, ['qps', 'tx_gbps', 'goodput_gbps', 'tx_packets', 'rx_packets', 'lost', 'retransmits',
                                 'cnp_rx', 'p50_us', 'p99_us', 'cc_gbps']);

  if (dt > 0) { // a new second of the run (none after it finished: the clock stopped)
    dash.charts.ports.push(t, portRates);
    dash.charts.flows.push(t, flowRates);
    dash.charts.cnp.push(t, cnp);
    dash.charts.pfc.push(t, pfc);
    dash.charts.sw.push(t, sw);
  }
  if (dt > 0 || !prev) { dash.charts.lat.push(t, lat); dash.charts.cc.push(t, cc, ccOpts); }
  updateFabric(m, pm, dt);
  dash.prev = { t, m };
  dash.lastMetrics = m;
  dash.updates++;
}

async function poll() {
  const err = document.getElementById('error');
  try {
    if (!dash.run) {
      const r = await fetch('api/run', { cache: 'no-store' });
      if (!r.ok) throw new Error(`api/run: HTTP ${r.status}`);
      dash.run = await r.json();
      if (dash.run.fabric) dash.fabric = drawFabric(dash.run.fabric);
    }
    const r = await fetch('metrics', { cache: 'no-store' });
    if (!r.ok) throw new Error(`metrics: HTTP ${r.status}`);
    update(parseMetrics(await r.text()));
    err.textContent = '';
  } catch (e) {
    err.textContent = `engine not reachable (${e.message}); retrying`;
  }
  setTimeout(poll, POLL_MS);
}

window.addEventListener('DOMContentLoaded', () => {
  dash.charts = {
    ports: new LiveChart('chart-port-rates'),
    flows: new LiveChart('chart-flow-rates'),
    lat: new LiveChart('chart-latency'),
    cnp: new LiveChart('chart-cnp'),
    pfc: new LiveChart('chart-pfc'),
    cc: new LiveChart('chart-cc', [{ label: 'Gb/s' }, { scale: 'alpha', label: 'α' }]),
    sw: new LiveChart('chart-switch'),
  };
  poll();
});
