// clrspy report page: draws the data of #clrspy-data (clrspy report) or of
// the live view's websocket (clrspy serve --web). No dependencies, no
// network beyond the live view's own server.
(function () {
'use strict';

const $ = (id) => document.getElementById(id);
const SVGNS = 'http://www.w3.org/2000/svg';
const GENS = ['gen0', 'gen1', 'gen2'];
const TYPE_LETTER = ['N', 'B', 'F'];
const TYPE_NAME = ['blocking', 'background', 'foreground'];
const FLAG_INDUCED = 8, FLAG_LOST = 4;
const HIST_EDGES = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];

// ---------------------------------------------------------------- model

const COLS = ['n', 'gen', 'type', 'reason', 'complete', 'start', 'pstart', 'pause', 'susp', 'dur', 'pct', 'npause',
  'alloc', 'peak', 'after', 'promo', 'pinned', 'fin', 'heaps', 'flags'];
const NCOLS = { size: 5, surv: 4, frag: 4 };
const SCOLS = ['start', 'pause', 'susp', 'reason', 'thread', 'incomplete'];

function emptyGC() {
  const g = {};
  for (const c of COLS) g[c] = [];
  for (const c in NCOLS) { g[c] = []; for (let i = 0; i < NCOLS[c]; i++) g[c].push([]); }
  return g;
}
function emptySusp() { const s = {}; for (const c of SCOLS) s[c] = []; return s; }
function pushAll(dst, src) { if (src) for (let i = 0; i < src.length; i++) dst.push(src[i]); }
function appendGC(g, src) {
  if (!src || !src.n) return 0;
  for (const c of COLS) pushAll(g[c], src[c]);
  for (const c in NCOLS) for (let i = 0; i < NCOLS[c]; i++) pushAll(g[c][i], src[c] && src[c][i]);
  return src.n.length;
}
function appendSusp(s, src) { if (src && src.start) for (const c of SCOLS) pushAll(s[c], src[c]); }

const M = {
  page: {}, g: emptyGC(), s: emptySusp(), t0: 0, t1: 0, cpu: null, live: false, ended: false, epoch: 0,
  gcReasons: {}, suspReasons: {}, byNumber: new Map(),
};
const S = {
  sel: null, history: [], ylog: false, filt: { gen: [true, true, true], type: [true, true, true], reason: 'all' },
  sort: { key: 'n', dir: 1 }, tableLimit: 500, liveWindow: 60000,
  flame: { dir: 'callees', orient: 'icicle', color: 'module', zoom: [], search: '' },
  snap: { sort: 'retained_bytes', dir: -1, zoom: 0, sel: null },
};
const STATS = { renders: 0, renderMs: 0, maxRenderMs: 0, updates: 0, applyMs: 0, parts: {}, marks: 0, markLog: [], drawnAt: 0, firstPassAt: 0 };
window.clrspy = { model: M, state: S, stats: STATS, select: setSelection, reset: resetSelection, search: setSearch };

function loadPage(p) {
  M.page = p;
  M.epoch++;
  M.g = emptyGC();
  M.s = emptySusp();
  M.byNumber = new Map();
  appendGC(M.g, p.gcs);
  indexRows(0);
  sortRows(0);
  appendSusp(M.s, p.suspensions);
  M.gcReasons = Object.assign({}, p.gc_reasons || {});
  M.suspReasons = Object.assign({}, p.suspend_reasons || {});
  M.t0 = p.t0_ms || 0;
  M.t1 = Math.max(p.t1_ms || 0, M.t0);
  // The flame graph panel's views: the first (CPU where perf sampled)
  // and the others (the runtime's wall-clock samples, off-CPU time).
  M.flames = [p.cpu].concat(p.views || []).filter(Boolean).map(prepareFlame);
  M.view = 0;
  M.cpu = M.flames[0] || null;
  M.snap = prepareSnapshot(p.snapshot);
  S.snap.zoom = 0; S.snap.sel = null;
  S.sel = null; S.history = []; S.flame.zoom = [];
  invalidate('all');
}
function indexRows(from) { for (let i = from; i < M.g.n.length; i++) M.byNumber.set(M.g.n[i], i); }
// Live rows come when GCs end: a background GC ends after the GCs that
// started during it. The panels need start order.
function sortRows(from) {
  const st = M.g.start;
  let sorted = true;
  for (let i = Math.max(from, 1); i < st.length; i++) if (st[i] < st[i - 1]) { sorted = false; break; }
  if (sorted) return;
  M.epoch++; // row indexes change: the timeline redraws
  const perm = st.map((_, i) => i).sort((a, b) => st[a] - st[b] || M.g.n[a] - M.g.n[b]);
  const re = (arr) => { const c = arr.slice(); for (let i = 0; i < perm.length; i++) arr[i] = c[perm[i]]; };
  for (const c of COLS) re(M.g[c]);
  for (const c in NCOLS) for (const a of M.g[c]) re(a);
  M.byNumber = new Map();
  indexRows(0);
}

// ----------------------------------------------------------- formatting

function fmt(v, d) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  return v.toFixed(d === undefined ? 2 : d);
}
function fmtMs(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  if (v >= 100) return v.toFixed(1);
  if (v >= 10) return v.toFixed(2);
  return v.toFixed(3);
}
function fmtTime(ms, span) {
  const s = ms / 1000;
  if (span !== undefined && span < 50) return (ms).toFixed(span < 5 ? 2 : 1) + ' ms';
  if (span !== undefined && span < 5000) return s.toFixed(3) + ' s';
  return s.toFixed(2) + ' s';
}
function fmtDur(ms) {
  if (ms >= 60000) return (ms / 60000).toFixed(1) + ' min';
  if (ms >= 1000) return (ms / 1000).toFixed(2) + ' s';
  return ms.toFixed(ms >= 10 ? 1 : 3) + ' ms';
}
function fmtInt(n) { return n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'); }
function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
function genName(i) {
  const g = M.g;
  let s = String(g.gen[i]) + (TYPE_LETTER[g.type[i]] || '?');
  const r = M.gcReasons[g.reason[i]];
  if (r === 'Induced') s += 'I'; else if (r === 'InducedNotForced') s += 'i';
  return s;
}
function reasonName(i) { return M.gcReasons[M.g.reason[i]] || String(M.g.reason[i]); }
function gen3(i) { return Math.min(Math.max(M.g.gen[i], 0), 2); }

// nice ticks
function ticks(lo, hi, n) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const step0 = span / Math.max(n, 1);
  const mag = Math.pow(10, Math.floor(Math.log10(step0)));
  const f = step0 / mag;
  const step = (f >= 5 ? 10 : f >= 2 ? 5 : f >= 1 ? 2 : 1) * mag;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
  return out;
}
function niceMax(v) {
  if (!(v > 0)) return 1;
  const mag = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * mag >= v) return m * mag;
  return 10 * mag;
}

function el(tag, attrs, parent) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

// ------------------------------------------------------------ selection

// A live page's time axis spans a whole step (5 s, 10 s, 20 s, ... up to
// the window) so that it only scrolls as time passes, without rescaling
// at every update.
const LIVE_SPANS = [5000, 10000, 20000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000];
function domain() {
  if (S.sel) return S.sel;
  if (M.live) {
    const elapsed = M.t1 - M.t0;
    let span = LIVE_SPANS.find((x) => x >= elapsed) || Math.ceil(elapsed / 3600000) * 3600000;
    if (S.liveWindow > 0) span = Math.min(span, S.liveWindow);
    if (M.t0 + span >= M.t1) return [M.t0, M.t0 + span];
    return [M.t1 - span, M.t1];
  }
  return [M.t0, Math.max(M.t1, M.t0 + 1)];
}
// rows whose GC start is in [a, b] (starts ascend)
function lowerBound(arr, v) { let lo = 0, hi = arr.length; while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] < v) lo = m + 1; else hi = m; } return lo; }
function upperBound(arr, v) { let lo = 0, hi = arr.length; while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] <= v) lo = m + 1; else hi = m; } return lo; }
function rowRange() {
  const st = M.g.start;
  if (!S.sel) {
    if (M.live) { const d = domain(); return [lowerBound(st, d[0]), st.length]; }
    return [0, st.length];
  }
  return [lowerBound(st, S.sel[0]), upperBound(st, S.sel[1])];
}
function setSelection(a, b, noHistory) {
  if (!(b > a)) return;
  if (!noHistory) S.history.push(S.sel);
  S.sel = [a, b];
  S.flame.zoom = [];
  invalidate('all');
}
function resetSelection() { S.history = []; S.sel = null; S.flame.zoom = []; invalidate('all'); }
function zoomBack() { if (S.history.length) { S.sel = S.history.pop(); S.flame.zoom = []; invalidate('all'); } }

// --------------------------------------------------------------- render

let dirty = new Set(), scheduled = false;
const lastRun = {};
function invalidate() {
  for (const p of arguments) dirty.add(p);
  rootAttr('drawn', '0');
  if (!scheduled) { scheduled = true; requestAnimationFrame(renderNow); }
}
// rootAttr sets a data- attribute of <html> (what tests and scripts read)
// when it changes.
const rootAttrs = {};
function rootAttr(name, v) {
  if (rootAttrs[name] === v) return;
  rootAttrs[name] = v;
  document.documentElement.setAttribute('data-' + name, v);
}
const PARTS = [
  ['timeline', renderTimeline], ['selinfo', renderSelInfo], ['header', renderHeader], ['findings', renderFindings], ['summary', renderSummary],
  ['heap', renderHeapChart], ['hist', renderHist], ['longest', renderLongest], ['table', renderTable],
  ['flame', renderFlame], ['susp', renderSusp], ['locks', renderLocks], ['exc', renderExceptions], ['heaptypes', renderHeapTypes],
  ['threadpool', renderThreadPool], ['requests', renderRequests], ['stacks', renderStacks], ['snapshot', renderSnapshot], ['memory', renderMemory],
];
// In a live page, costly panels render at most this often (ms).
const LIVE_MIN_GAP = { table: 1000, flame: 1000, susp: 2000, locks: 2000, exc: 2000, threadpool: 2000, heaptypes: 2000, hist: 1000, longest: 1000, heap: 1000, summary: 1000, header: 2000 };
// One render pass does the dirty panels in order until it has spent its
// budget; the rest go to the next frame, so a frame holds at most one
// costly panel (a live page never freezes for all of them at once).
const FRAME_BUDGET = 10;
const TOP_PARTS = ['timeline', 'selinfo', 'header', 'findings', 'summary'];
function renderNow() {
  scheduled = false;
  const t0 = performance.now();
  if (dirty.has('all')) { dirty.delete('all'); for (const [name] of PARTS) dirty.add(name); lastForced = true; }
  const force = lastForced;
  let later = false;
  measure();
  // The timeline first (it is what moves); then the panels drawn longest
  // ago, so that a busy page still gets to every panel in turn.
  const order = PARTS.filter(([name]) => dirty.has(name))
    .sort((p, q) => (p[0] === 'timeline' ? -1 : q[0] === 'timeline' ? 1 : (lastRun[p[0]] || 0) - (lastRun[q[0]] || 0)));
  for (const [name, fn] of order) {
    // A live page stops at its budget. An offline page draws the top of
    // the page in its first frame (the summary and the timeline show
    // sooner), then everything else in one more (fewer frames, sooner
    // done than in slices).
    if (M.live ? performance.now() - t0 > FRAME_BUDGET : !STATS.renders && TOP_PARTS.indexOf(name) < 0) break;
    if (M.live && !force && LIVE_MIN_GAP[name] && lastRun[name] && t0 - lastRun[name] < LIVE_MIN_GAP[name]) {
      later = true; // not yet: the panel was drawn moments ago
      continue;
    }
    dirty.delete(name);
    const a = performance.now();
    try { fn(); } catch (e) { console.error('clrspy: rendering ' + name + ': ' + (e && e.stack || e)); }
    const cost = performance.now() - a;
    lastRun[name] = a;
    STATS.parts[name] = (STATS.parts[name] || 0) + cost;
  }
  const cost = performance.now() - t0;
  if (!STATS.firstPassAt) STATS.firstPassAt = performance.now(); // the timeline is drawn
  STATS.renders++; STATS.renderMs += cost; STATS.maxRenderMs = Math.max(STATS.maxRenderMs, cost);
  let pending = false;
  for (const [name] of PARTS) if (dirty.has(name) && !(M.live && !force && LIVE_MIN_GAP[name] && lastRun[name] && t0 - lastRun[name] < LIVE_MIN_GAP[name])) pending = true;
  if (!pending) lastForced = false;
  // Tests and scripts wait for this: every panel drawn, nothing queued.
  rootAttr('drawn', dirty.size ? '0' : '1');
  if (!dirty.size && !STATS.drawnAt) STATS.drawnAt = performance.now(); // ms since navigation
  if (pending && !scheduled) { scheduled = true; requestAnimationFrame(renderNow); }
  else if (later && !scheduled) { scheduled = true; setTimeout(() => requestAnimationFrame(renderNow), 100); }
}
let lastForced = false;

// ---------------------------------------------------------- header/summary

function renderHeader() {
  const p = M.page, run = p.run || {}, inp = p.input || {};
  document.title = (p.title || inp.source || 'clrspy') + ' — clrspy';
  $('src').textContent = inp.source || p.title || '';
  $('src').title = inp.source || '';
  const b = [];
  if (run.runtime) b.push(['.NET ' + run.runtime]);
  if (run.gc) {
    let gc = run.gc + ' GC';
    const heaps = maxOf(M.g.heaps);
    if (heaps > 1) gc += ', ' + heaps + ' heaps';
    b.push([gc]);
  }
  if (run.os || run.arch) b.push([[run.os, run.arch].filter(Boolean).join(' ')]);
  if (p.pid) b.push(['pid ' + p.pid]);
  if (!inp.complete && inp.source !== undefined) b.push(['partial', 'bad']);
  $('badges').innerHTML = b.map((x) => '<span class="badge ' + (x[1] || '') + '">' + esc(x[0]) + '</span>').join('');
  const part = $('partial');
  const notes = (inp.partial || []).slice();
  if (!inp.complete && notes.length) {
    part.hidden = false;
    part.innerHTML = '&#9888; Partial report: ' + notes.map(esc).join('; ');
  } else part.hidden = true;
  $('foot').textContent = 'clrspy ' + (M.live ? 'live view' : 'report') + (p.start_utc ? ' · session started ' + p.start_utc : '') +
    ' · times are seconds since the session start';
}
function maxOf(a) { let m = 0; for (let i = 0; i < a.length; i++) if (a[i] > m) m = a[i]; return m; }

function renderSummary() {
  const p = M.page, inp = p.input || {}, sum = p.summary, run = p.run || {};
  const cards = [];
  const dur = M.t1 - M.t0;
  cards.push(card('Duration', fmtDur(dur), p.start_utc ? 'from ' + p.start_utc.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : ''));
  if (sum) {
    const bg = sum.by_generation || {};
    const n = sum.gcs_started;
    const gens = [0, 1, 2].map((g) => 'gen' + g + ' ' + fmtInt((bg['gen' + g] || {}).count || 0)).join(' · ');
    const types = Object.keys(sum.by_type || {}).map((t) => t.replace('non_concurrent', 'blocking') + ' ' + sum.by_type[t]).join(' · ');
    cards.push(card('GCs', fmtInt(n), gens + '<br>' + types + (sum.incomplete ? '<br><span class="nowrap" title="GCs whose end or heap statistics the session did not see: counted here, out of the pause figures">' + fmtInt(sum.incomplete) + ' incomplete</span>' : '')));
    cards.push(card('Time paused', fmt(sum.pause_time_percent, 2) + '%', '<span title="SuspendEEBegin to RestartEEEnd of every GC suspension, each moment once: a foreground GC inside a background one counts once (clrspy gc\'s total)">' + fmtMs(sum.total_pause_ms) + ' ms stopped for GCs, each moment once</span>'));
    let t = '<table><tr><th></th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>total</th></tr>';
    const row = (label, s) => '<tr><td>' + label + '</td>' + (s.count ? '<td>' + fmtInt(s.count) + '</td><td>' + fmtMs(s.p50_ms) + '</td><td>' + fmtMs(s.p90_ms) + '</td><td>' + fmtMs(s.p99_ms) +
      '</td><td><b>' + fmtMs(s.max_pause_ms) + '</b></td><td>' + fmtMs(s.total_pause_ms) + '</td>' : '<td>0</td><td colspan=5 class="small">–</td>') + '</tr>';
    for (const g of ['0', '1', '2']) t += row('<i style="color:var(--g' + g + ')">&#9679;</i> gen' + g, bg['gen' + g] || {});
    t += row('all', { count: sum.gc_count, p50_ms: sum.p50_ms, p90_ms: sum.p90_ms, p99_ms: sum.p99_ms, max_pause_ms: sum.max_pause_ms, total_pause_ms: sum.total_pause_ms });
    t += '</table>';
    cards.push('<div class="card span2"><h3>Pause ms by generation (complete GCs' + (M.live ? '; percentiles from 1-2-5 buckets' : '') + ')</h3>' + t + '</div>');
  }
  const lost = inp.events_lost || 0;
  const evBad = lost > 0 || inp.truncated;
  let evSub = fmtInt(lost) + ' lost';
  if (inp.truncated) evSub += ' · truncated at byte ' + fmtInt(inp.truncated_at);
  if (inp.decode_errors) evSub += ' · ' + fmtInt(inp.decode_errors) + ' undecodable';
  cards.push('<div class="card' + (evBad ? ' bad' : '') + '"><h3>Events</h3><div class="big">' + fmtInt(inp.events || 0) + '</div><div class="small">' + evSub + '</div></div>');
  const rt = [run.runtime ? '.NET ' + run.runtime : 'runtime unknown', run.gc ? run.gc + ' GC' : ''].filter(Boolean);
  const heaps = maxOf(M.g.heaps);
  cards.push(card('Runtime', esc(run.runtime ? '.NET ' + run.runtime : '–'), esc(rt.slice(1).join(' ') + (heaps ? ' · ' + heaps + ' heap' + (heaps > 1 ? 's' : '') : '')) + (run.os ? '<br>' + esc([run.os, run.arch].filter(Boolean).join(' ')) : '')));
  if (run.command_line) cards.push('<div class="card wide cmd"><h3>Command line</h3><div class="small">' + esc(run.command_line) + '</div></div>');
  $('summary').innerHTML = cards.join('');
}
function card(title, big, small) {
  return '<div class="card"><h3>' + esc(title) + '</h3><div class="big">' + big + '</div><div class="small">' + (small || '') + '</div></div>';
}

function renderSelInfo() {
  const [a, b] = rowRange();
  const d = domain();
  const g = M.g;
  let paused = 0, mx = 0, n = 0, mxi = -1;
  for (let i = a; i < b; i++) { n++; if (g.complete[i]) { paused += g.pause[i]; if (g.pause[i] > mx) { mx = g.pause[i]; mxi = i; } } }
  const span = d[1] - d[0];
  const what = S.sel ? '<b>Selection</b> ' : (M.live ? '<b>Live</b> ' : '<b>Whole trace</b> ');
  let s = what + fmtTime(d[0], span) + ' – ' + fmtTime(d[1], span) + ' (' + fmtDur(span) + ') · ' + fmtInt(n) + ' GCs · ' +
    '<span title="the complete GCs\' pauses added up, as PerfView does: a foreground GC inside a background one counts in both (the Time paused card counts each moment once)">' +
    fmtMs(paused) + ' ms paused, the GCs\' pauses summed (' + fmt(span > 0 ? paused * 100 / span : 0, 2) + '%)</span>';
  if (mxi >= 0) s += ' · longest ' + fmtMs(mx) + ' ms (GC ' + g.n[mxi] + ', ' + genName(mxi) + ')';
  const e = $('sel-info');
  // A live page before its first GC: say what it waits for, not empty panels.
  if (M.live && !g.n.length) s = '<b>Live</b> · waiting for the first GC or CPU sample of the session (a GC shows when it ends)';
  e.innerHTML = s;
  rootAttr('sel-t0', String(d[0]));
  rootAttr('sel-t1', String(d[1]));
  rootAttr('sel-gcs', String(n));
  $('zoom-reset').disabled = !S.sel;
  $('zoom-back').disabled = !S.history.length;
}

// -------------------------------------------------------------- timeline

// mr leaves room for the heap chart's right axis (allocation rate, at
// most four characters: fmtAxis) on every chart sharing the time axis.
const TL = { W: 0, H: 230, ml: 58, mr: 40, mt: 12, mb: 26 };
// Widths are read once per render pass, before anything is written: a
// read after a write forces the browser to lay out the page again.
const WIDTHS = {};
function measure() { for (const id of ['timeline', 'heapchart', 'memchart', 'hist', 'flame']) WIDTHS[id] = $(id).clientWidth; }
function widthOf(node, def) { return WIDTHS[node.id] || node.clientWidth || def; }
function plotWidth(node) { return Math.max(200, widthOf(node, 900)); }
function xScale(d, w) { const k = (w - TL.ml - TL.mr) / (d[1] - d[0]); return (t) => TL.ml + (t - d[0]) * k; }

// The timeline's marks are drawn at x = (t - origin) * k: a live page
// scrolls by moving their group and adds only the new GCs' marks; it
// redraws everything only when the scales change (a new longest pause, a
// wider span, a resize, a selection, a filter).
const TLS = { key: '', svg: null, marks: null, bands: null, ax: null, origin: 0, k: 0, next: 0, epoch: -1 };
function renderTimeline() {
  const node = $('timeline');
  const W = plotWidth(node), H = TL.H;
  const d = domain();
  const [a, b] = rowRange();
  const g = M.g;
  let ymax = 0, ymin = Infinity;
  for (let i = a; i < b; i++) { const v = g.pause[i]; if (v > ymax) ymax = v; if (v > 0 && v < ymin) ymin = v; }
  const y0 = H - TL.mb, y1 = TL.mt;
  let y, yt, ykey;
  if (S.ylog) {
    const lo = Math.pow(10, Math.floor(Math.log10(Math.min(ymin === Infinity ? 0.1 : ymin, 0.1))));
    const hi = niceMax(Math.max(ymax, lo * 10));
    const L0 = Math.log10(lo), L1 = Math.log10(hi);
    y = (v) => y0 - (Math.log10(Math.max(v, lo)) - L0) / (L1 - L0) * (y0 - y1);
    yt = []; for (let e = L0; e <= L1 + 1e-9; e++) yt.push(Math.pow(10, e));
    ykey = 'log' + lo + '/' + hi;
  } else {
    const hi = niceMax(ymax || 1);
    y = (v) => y0 - v / hi * (y0 - y1);
    yt = ticks(0, hi, 4);
    ykey = 'lin' + hi;
  }
  const k = (W - TL.ml - TL.mr) / (d[1] - d[0]);
  const key = [W, d[1] - d[0], ykey, JSON.stringify(S.filt), S.sel ? S.sel.join(',') : 'all', M.epoch].join('|');
  const incremental = M.live && !S.sel && key === TLS.key && TLS.svg && node.firstChild === TLS.svg && TLS.next <= b;
  if (!incremental) {
    const svg = el('svg', { width: W, height: H, class: 'tl' });
    const defs = el('defs', {}, svg);
    const clip = el('clipPath', { id: 'tlclip' }, defs);
    el('rect', { x: TL.ml - 5, y: 0, width: W - TL.ml - TL.mr + 10, height: H }, clip);
    const lab = el('text', { x: 12, y: (y0 + y1) / 2, class: 'ylabel', transform: 'rotate(-90 12 ' + ((y0 + y1) / 2) + ')', 'text-anchor': 'middle' }, svg);
    lab.textContent = 'pause ms' + (S.ylog ? ' (log)' : '');
    TLS.ax = el('g', { class: 'ax' }, svg);
    const plot = el('g', { 'clip-path': 'url(#tlclip)' }, svg);
    TLS.bands = el('g', {}, plot);
    TLS.marks = el('g', { class: 'marks' }, plot);
    TLS.svg = svg; TLS.key = key; TLS.origin = d[0]; TLS.k = k; TLS.next = a;
    node.replaceChildren(svg);
    brush(node, svg, W, y1, y0);
  } else {
    // drop the marks that scrolled out (they are in start order)
    for (let m = TLS.marks.firstChild; m && g.start[+m.getAttribute('data-i')] < d[0];) { const n = m.nextSibling; m.remove(); m = n; }
    for (let r = TLS.bands.firstChild; r && +r.getAttribute('data-end') < d[0];) { const n = r.nextSibling; r.remove(); r = n; }
  }
  // axes (cheap: a few ticks)
  const ax = TLS.ax;
  ax.replaceChildren();
  for (const v of yt) {
    const yy = y(v);
    el('line', { x1: TL.ml, x2: W - TL.mr, y1: yy, y2: yy }, ax);
    const t = el('text', { x: TL.ml - 6, y: yy + 3.5, 'text-anchor': 'end' }, ax);
    t.textContent = v >= 1 ? String(+v.toFixed(1)) : String(+v.toPrecision(2));
  }
  const x = xScale(d, W);
  timeAxis(ax, d, x, W, y0);
  // new marks, at x relative to the origin
  const X = (t) => TL.ml + (t - TLS.origin) * TLS.k;
  const parts = [];
  let bandHTML = '';
  for (let i = Math.max(TLS.next, a); i < b; i++) {
    const w = g.pause[i] * k;
    if (w >= 1.5 && g.pause[i] > 0) bandHTML += '<rect class="band g' + gen3(i) + '" data-end="' + (g.pstart[i] + g.pause[i]) + '" x="' + X(g.pstart[i]).toFixed(1) + '" y="' + y1 + '" width="' + w.toFixed(1) + '" height="' + (y0 - y1) + '"/>';
    parts.push(markPath(i, X(g.start[i]), y0, Math.min(y(g.pause[i]), y0 - 3)));
  }
  if (bandHTML) TLS.bands.insertAdjacentHTML('beforeend', bandHTML);
  if (parts.length) TLS.marks.insertAdjacentHTML('beforeend', parts.join(''));
  TLS.next = b;
  const shift = 'translate(' + (-(d[0] - TLS.origin) * TLS.k).toFixed(2) + ' 0)';
  TLS.marks.setAttribute('transform', shift);
  TLS.bands.setAttribute('transform', shift);
  TL.d = d; TL.W = W;
  node.setAttribute('data-t0', String(d[0]));
  node.setAttribute('data-t1', String(d[1]));
  node.setAttribute('data-plot-left', String(TL.ml));
  node.setAttribute('data-plot-right', String(W - TL.mr));
  STATS.marks = TLS.marks.childElementCount;
  if (STATS.markLog.length < 10000) STATS.markLog.push([Date.now(), STATS.marks]);
}
function passes(i) {
  const f = S.filt, g = M.g;
  if (!f.gen[gen3(i)] || !f.type[g.type[i]] ) return false;
  if (f.reason !== 'all' && String(g.reason[i]) !== f.reason) return false;
  return true;
}
function markPath(i, x, y0, y) {
  const g = M.g, t = g.type[i], r = 3.6;
  let head;
  if (t === 1) head = 'M' + (x - r - 0.6) + ' ' + y + 'L' + x + ' ' + (y - r - 0.6) + 'L' + (x + r + 0.6) + ' ' + y + 'L' + x + ' ' + (y + r + 0.6) + 'Z'; // diamond: background
  else if (t === 2) head = 'M' + (x - r) + ' ' + (y + r * 0.8) + 'L' + x + ' ' + (y - r) + 'L' + (x + r) + ' ' + (y + r * 0.8) + 'Z'; // triangle: foreground
  else head = 'M' + (x - r) + ' ' + y + 'a' + r + ' ' + r + ' 0 1 0 ' + (2 * r) + ' 0a' + r + ' ' + r + ' 0 1 0 ' + (-2 * r) + ' 0'; // circle: blocking
  let cls = 'm g' + gen3(i) + ' t' + t;
  if (!g.complete[i]) cls += ' inc';
  if (!passes(i)) cls += ' dim';
  const xs = x.toFixed(1);
  return '<path class="' + cls + '" data-gc-index="' + g.n[i] + '" data-i="' + i + '" d="M' + xs + ' ' + y0 + 'V' + y.toFixed(1) + head + '"/>';
}
function timeAxis(ax, d, x, W, y0) {
  el('line', { class: 'base', x1: TL.ml, x2: W - TL.mr, y1: y0 + 0.5, y2: y0 + 0.5 }, ax);
  const span = d[1] - d[0];
  for (const v of ticks(d[0], d[1], Math.max(2, Math.floor((W - TL.ml) / 110)))) {
    const xx = x(v);
    el('line', { x1: xx, x2: xx, y1: y0, y2: y0 + 4, class: 'base' }, ax);
    const t = el('text', { x: xx, y: y0 + 16, 'text-anchor': 'middle' }, ax);
    t.textContent = fmtTime(v, span);
  }
}

// drag to select a range, on any chart sharing the time axis
function brush(node, svg, W, top, bottom) {
  const toT = (px) => { const d = TL.d; return d[0] + (Math.min(Math.max(px, TL.ml), W - TL.mr) - TL.ml) * (d[1] - d[0]) / (W - TL.ml - TL.mr); };
  svg.addEventListener('mousedown', (ev) => {
    if (ev.button !== 0) return;
    const r = svg.getBoundingClientRect();
    const sx = ev.clientX - r.left;
    if (sx < TL.ml - 4 || sx > W - TL.mr + 4) return;
    ev.preventDefault();
    const rect = el('rect', { class: 'brush', x: sx, y: top, width: 0, height: bottom - top }, svg);
    let ex = sx;
    const move = (e) => {
      ex = Math.min(Math.max(e.clientX - r.left, TL.ml), W - TL.mr);
      rect.setAttribute('x', Math.min(sx, ex));
      rect.setAttribute('width', Math.abs(ex - sx));
    };
    const up = (e) => {
      window.removeEventListener('mousemove', move);
      window.removeEventListener('mouseup', up);
      move(e);
      rect.remove();
      if (Math.abs(ex - sx) >= 4) setSelection(toT(Math.min(sx, ex)), toT(Math.max(sx, ex)));
      else clickAt(ev.target);
    };
    window.addEventListener('mousemove', move);
    window.addEventListener('mouseup', up);
  });
  svg.addEventListener('mouseover', (ev) => {
    const i = ev.target.getAttribute && ev.target.getAttribute('data-i');
    if (i !== null && i !== undefined) showTip(ev, gcTip(+i));
  });
  svg.addEventListener('mousemove', (ev) => { if (!$('tip').hidden) moveTip(ev); });
  svg.addEventListener('mouseout', (ev) => { if (ev.target.getAttribute && ev.target.getAttribute('data-i') !== null) hideTip(); });
}
function clickAt(target) {
  const i = target && target.getAttribute && target.getAttribute('data-i');
  if (i === null || i === undefined) return;
  highlightRow(M.g.n[+i], true);
}
function highlightRow(number, scroll) {
  for (const e of document.querySelectorAll('.hl')) e.classList.remove('hl');
  for (const e of document.querySelectorAll('[data-gc-index="' + number + '"]')) {
    e.classList.add('hl');
    if (scroll && e.tagName === 'TR' && e.closest('#gctable')) e.scrollIntoView({ block: 'nearest' });
  }
}

function gcTip(i) {
  const g = M.g;
  const rows = [
    ['GC', '<b>#' + g.n[i] + '</b> · ' + genName(i) + ' · ' + TYPE_NAME[g.type[i]] + (g.complete[i] ? '' : ' · <b>incomplete</b>')],
    ['reason', esc(reasonName(i))],
    ['start', fmtTime(g.start[i]) + ' (pause from ' + fmtTime(g.pstart[i]) + ')'],
    ['pause', '<b>' + fmtMs(g.pause[i]) + ' ms</b>' + (g.npause[i] > 1 ? ' in ' + g.npause[i] + ' stops' : '') + ' · suspend ' + fmtMs(g.susp[i]) + ' ms'],
  ];
  if (g.dur[i] !== null) rows.push(['GC work', fmtMs(g.dur[i]) + ' ms']);
  if (g.peak[i] !== null || g.after[i] !== null) rows.push(['heap', fmt(g.peak[i], 1) + ' → ' + fmt(g.after[i], 1) + ' MB · promoted ' + fmt(g.promo[i], 2) + ' MB']);
  if (g.alloc[i] !== null) rows.push(['gen0 alloc', fmt(g.alloc[i], 2) + ' MB']);
  const sz = g.size;
  if (sz[0][i] !== null) rows.push(['after', 'gen0 ' + fmt(sz[0][i], 1) + ' · gen1 ' + fmt(sz[1][i], 1) + ' · gen2 ' + fmt(sz[2][i], 1) + ' · LOH ' + fmt(sz[3][i], 1) + (sz[4][i] !== null ? ' · POH ' + fmt(sz[4][i], 1) : '') + ' MB']);
  if (g.flags[i] & FLAG_LOST) rows.push(['note', 'events were lost during this GC']);
  return rows.map((r) => '<div><span class="k">' + r[0] + '</span> ' + r[1] + '</div>').join('');
}
function showTip(ev, html) { const t = $('tip'); t.innerHTML = html; t.hidden = false; moveTip(ev); }
function moveTip(ev) {
  const t = $('tip');
  const w = t.offsetWidth, h = t.offsetHeight;
  let x = ev.clientX + 14, y = ev.clientY + 14;
  if (x + w > window.innerWidth - 8) x = ev.clientX - w - 14;
  if (y + h > window.innerHeight - 8) y = ev.clientY - h - 14;
  t.style.left = Math.max(4, x) + 'px'; t.style.top = Math.max(4, y) + 'px';
}
function hideTip() { $('tip').hidden = true; }

// ------------------------------------------------------------ heap chart

function renderHeapChart() {
  const node = $('heapchart');
  const g = M.g;
  let any = false;
  for (let i = 0; i < g.n.length && !any; i++) if (g.after[i] !== null || g.size[0][i] !== null) any = true;
  if (!any) { node.replaceChildren(); return; }
  const W = plotWidth(node), H = 190;
  const d = domain();
  const x = xScale(d, W);
  let [a, b] = rowRange();
  a = Math.max(0, a - 1); b = Math.min(g.n.length, b + 1);
  const y0 = H - 24, y1 = 28;
  // stacked generation sizes after each GC, held until the next one
  let hmax = 0, rmax = 0;
  const rate = new Array(b - a).fill(null);
  for (let i = a; i < b; i++) {
    let s = 0; for (let k = 0; k < 5; k++) s += g.size[k][i] || 0;
    hmax = Math.max(hmax, s, g.peak[i] || 0, g.after[i] || 0);
    const r = allocRate(i);
    rate[i - a] = r;
    if (r !== null) rmax = Math.max(rmax, r);
  }
  const hi = niceMax(hmax), rhi = niceMax(rmax);
  const y = (v) => y0 - v / hi * (y0 - y1);
  const yr = (v) => y0 - v / rhi * (y0 - y1);
  const svg = el('svg', { width: W, height: H });
  const ax = el('g', { class: 'ax' }, svg);
  for (const v of ticks(0, hi, 3)) {
    el('line', { x1: TL.ml, x2: W - TL.mr, y1: y(v), y2: y(v) }, ax);
    const t = el('text', { x: TL.ml - 6, y: y(v) + 3.5, 'text-anchor': 'end' }, ax); t.textContent = String(+v.toFixed(1));
  }
  if (rmax > 0) for (const v of ticks(0, rhi, 3)) {
    const t = el('text', { x: W - TL.mr + 4, y: yr(v) + 3.5, 'text-anchor': 'start' }, ax); t.textContent = fmtAxis(v);
  }
  const lab = el('text', { x: 12, y: (y0 + y1) / 2, class: 'ylabel', transform: 'rotate(-90 12 ' + ((y0 + y1) / 2) + ')', 'text-anchor': 'middle' }, svg);
  lab.textContent = 'heap MB';
  timeAxis(ax, d, x, W, y0);
  const clipId = 'hc' + Math.random().toString(36).slice(2);
  const defs = el('defs', {}, svg);
  const cp = el('clipPath', { id: clipId }, defs);
  el('rect', { x: TL.ml, y: 0, width: W - TL.ml - TL.mr, height: H }, cp);
  const plot = el('g', { 'clip-path': 'url(#' + clipId + ')' }, svg);
  const xEnd = x(Math.min(d[1], M.t1)); // a live axis runs ahead of now
  // More GCs than pixels: one point per pixel column (the column's last
  // GC for the sizes, its highest peak and lowest after for the heap
  // line, its highest rate), so the paths stay as long as the chart is
  // wide whatever the number of GCs.
  const last = [], hiPeak = [], loAfter = [], hiRate = [], colX = [];
  let prevCol = -1;
  for (let i = a; i < b; i++) {
    const c = Math.floor(x(g.pstart[i]));
    if (c !== prevCol) { last.push(i); hiPeak.push(-1); loAfter.push(Infinity); hiRate.push(null); colX.push(i); prevCol = c; }
    const j = last.length - 1;
    last[j] = i;
    if (g.peak[i] !== null) hiPeak[j] = Math.max(hiPeak[j], g.peak[i]);
    if (g.after[i] !== null) loAfter[j] = Math.min(loAfter[j], g.after[i]);
    const r = rate[i - a];
    if (r !== null) hiRate[j] = Math.max(hiRate[j] === null ? 0 : hiRate[j], r);
  }
  const n = last.length;
  for (let k = 4; k >= 0; k--) {
    let p = '';
    let started = false;
    for (let j = 0; j < n; j++) {
      const i = last[j];
      if (g.size[0][i] === null) continue;
      let s = 0; for (let q = 0; q <= k; q++) s += g.size[q][i] || 0;
      const xs = x(g.pstart[i] + g.pause[i]);
      const nx = j + 1 < n ? x(g.pstart[last[j + 1]] + g.pause[last[j + 1]]) : xEnd;
      if (!started) { p += 'M' + xs.toFixed(1) + ' ' + y0; started = true; }
      p += 'L' + xs.toFixed(1) + ' ' + y(s).toFixed(1) + 'L' + nx.toFixed(1) + ' ' + y(s).toFixed(1);
    }
    if (started) { p += 'V' + y0 + 'Z'; el('path', { d: p, class: 'area' + k }, plot); }
  }
  // heap size: peak at the GC's start, after at its end (the sawtooth)
  let line = '';
  for (let j = 0; j < n; j++) {
    if (hiPeak[j] < 0 || loAfter[j] === Infinity) continue;
    const i0 = colX[j], i = last[j];
    const xs = x(g.pstart[i0]), xe = Math.max(x(g.pstart[i] + g.pause[i]), xs + 0.5);
    line += (line ? 'L' : 'M') + xs.toFixed(1) + ' ' + y(hiPeak[j]).toFixed(1) + 'L' + xe.toFixed(1) + ' ' + y(loAfter[j]).toFixed(1);
  }
  if (line) el('path', { d: line, class: 'heapline' }, plot);
  if (rmax > 0) {
    let rl = '';
    for (let j = 1; j < n; j++) {
      const r = hiRate[j];
      if (r === null) continue;
      const ip = last[j - 1], i = last[j];
      const xs = x(g.pstart[ip] + g.pause[ip]), xe = x(g.pstart[i]);
      rl += (rl ? 'L' : 'M') + xs.toFixed(1) + ' ' + yr(r).toFixed(1) + 'L' + xe.toFixed(1) + ' ' + yr(r).toFixed(1);
    }
    if (rl) el('path', { d: rl, class: 'rateline' }, plot);
  }
  const lg = el('g', {}, svg);
  const items = [['gen0', 'area0'], ['gen1', 'area1'], ['gen2', 'area2'], ['LOH', 'area3'], ['POH', 'area4'], ['heap before → after GC', 'heapline'], ['gen0 alloc MB/s (right axis)', 'rateline']];
  let lx = TL.ml + 4;
  for (const [name, cls] of items) {
    if (cls === 'rateline' && !(rmax > 0)) continue;
    if (cls.startsWith('area')) el('rect', { x: lx, y: 2, width: 10, height: 8, class: cls }, lg);
    else el('line', { x1: lx, x2: lx + 12, y1: 6, y2: 6, class: cls }, lg);
    const t = el('text', { x: lx + 15, y: 10, class: 'ylabel' }, lg); t.textContent = name;
    lx += 22 + name.length * 5.6;
  }
  node.replaceChildren(svg);
  brush(node, svg, W, y1, y0);
}
// allocation rate before GC i: gen0 allocated / time since the previous GC's pause ended (MB/s)
// fmtAxis writes a tick value in at most four characters (12k, 1.5M).
function fmtAxis(v) {
  if (v >= 1e6) return String(+(v / 1e6).toPrecision(2)) + 'M';
  if (v >= 1e4) return String(+(v / 1e3).toPrecision(3)) + 'k';
  return String(+v.toFixed(0));
}
function allocRate(i) {
  const g = M.g;
  if (i <= 0 || g.alloc[i] === null) return null;
  const since = g.pstart[i] - (g.pstart[i - 1] + g.pause[i - 1]);
  if (!(since > 0)) return null;
  return g.alloc[i] * 1000 / since;
}

// ------------------------------------------------------------- histogram

function renderHist() {
  const [a, b] = rowRange();
  const g = M.g;
  const nb = HIST_EDGES.length + 1;
  const counts = [new Array(nb).fill(0), new Array(nb).fill(0), new Array(nb).fill(0)];
  let lo = nb, hi = -1, top = 0, total = 0;
  for (let i = a; i < b; i++) {
    if (!g.complete[i]) continue;
    const v = g.pause[i];
    const k = upperBound(HIST_EDGES, v);
    const gg = gen3(i);
    counts[gg][k]++;
    total++;
    lo = Math.min(lo, k); hi = Math.max(hi, k); top = Math.max(top, counts[gg][k]);
  }
  $('hist-sub').textContent = fmtInt(total) + ' complete GCs' + (S.sel ? ' in the selection' : '');
  const node = $('hist');
  if (hi < 0) { node.innerHTML = '<div class="empty">No complete GC in this range.</div>'; return; }
  lo = Math.max(0, lo - 1); hi = Math.min(nb - 1, hi + 1);
  const W = Math.max(260, widthOf(node, 500)), H = 200, ml = 46, mb = 34, mt = 14;
  const svg = el('svg', { width: W, height: H, class: 'hist' });
  const n = hi - lo + 1;
  const bw = (W - ml - 18) / n;
  const yh = niceMax(top);
  const y = (v) => (H - mb) - v / yh * (H - mb - mt);
  const ax = el('g', { class: 'ax' }, svg);
  for (const v of ticks(0, yh, 4)) {
    if (v !== Math.round(v)) continue;
    el('line', { x1: ml, x2: W - 6, y1: y(v), y2: y(v) }, ax);
    const t = el('text', { x: ml - 5, y: y(v) + 3.5, 'text-anchor': 'end' }, ax); t.textContent = String(v);
  }
  const gw = Math.min(14, (bw - 6) / 3);
  for (let k = lo; k <= hi; k++) {
    const x0 = ml + (k - lo) * bw;
    for (let gg = 0; gg < 3; gg++) {
      const c = counts[gg][k];
      if (!c) continue;
      const xx = x0 + bw / 2 - 1.5 * gw + gg * gw;
      const r = el('rect', { x: xx, y: y(c), width: gw - 1, height: (H - mb) - y(c), fill: 'var(--g' + gg + ')' }, svg);
      const tt = el('title', {}, r); tt.textContent = 'gen' + gg + ': ' + c + ' GCs ' + histLabel(k);
      const ct = el('text', { x: xx + (gw - 1) / 2, y: y(c) - 2, 'text-anchor': 'middle', class: 'cnt' }, svg); ct.textContent = String(c);
    }
    if (k > lo || k > 0) {
      const t = el('text', { x: x0, y: H - mb + 14, 'text-anchor': 'middle' }, svg);
      t.textContent = edgeLabel(HIST_EDGES[k - 1]);
      el('line', { x1: x0, x2: x0, y1: H - mb, y2: H - mb + 4, stroke: '#98a2b3' }, svg);
    }
  }
  if (hi < HIST_EDGES.length) {
    const t = el('text', { x: ml + n * bw, y: H - mb + 14, 'text-anchor': 'middle' }, svg);
    t.textContent = edgeLabel(HIST_EDGES[hi]);
  }
  el('line', { x1: ml, x2: W - 6, y1: H - mb + 0.5, y2: H - mb + 0.5, stroke: '#98a2b3' }, svg);
  const t = el('text', { x: ml + (W - ml) / 2, y: H - 4, 'text-anchor': 'middle' }, svg); t.textContent = 'pause (ms)';
  const ym = (H - mb + mt) / 2;
  const yl = el('text', { x: 11, y: ym, class: 'ylabel', transform: 'rotate(-90 11 ' + ym + ')', 'text-anchor': 'middle' }, svg); yl.textContent = 'GCs';
  node.replaceChildren(svg);
}
function edgeLabel(v) { return v === undefined ? '' : v >= 1000 ? (v / 1000) + ' s' : String(v); }
function histLabel(k) {
  if (k === 0) return '<' + HIST_EDGES[0];
  if (k >= HIST_EDGES.length) return '≥' + HIST_EDGES[HIST_EDGES.length - 1];
  return HIST_EDGES[k - 1] + '–' + HIST_EDGES[k];
}

// --------------------------------------------------------------- longest

function renderLongest() {
  const [a, b] = rowRange();
  const g = M.g;
  const top = [];
  for (let i = a; i < b; i++) {
    if (!g.complete[i]) continue;
    if (top.length < 10 || g.pause[i] > g.pause[top[top.length - 1]]) {
      top.push(i); top.sort((x, y) => g.pause[y] - g.pause[x]); if (top.length > 10) top.pop();
    }
  }
  if (!top.length) { $('longest').innerHTML = '<div class="empty">No complete GC in this range.</div>'; return; }
  let h = '<table class="grid"><thead><tr><th>GC #</th><th class="l">gen</th><th class="l">reason</th><th>start s</th><th>pause ms</th><th>suspend ms</th><th>heap MB</th></tr></thead><tbody>';
  for (const i of top) {
    h += '<tr class="click g' + gen3(i) + '" data-gc-index="' + g.n[i] + '" data-i="' + i + '"><td>' + g.n[i] + '</td><td class="l gen">' + genName(i) + '</td><td class="l">' + esc(reasonName(i)) +
      '</td><td>' + (g.start[i] / 1000).toFixed(3) + '</td><td><b>' + fmtMs(g.pause[i]) + '</b></td><td>' + fmtMs(g.susp[i]) + '</td><td>' +
      (g.peak[i] !== null ? fmt(g.peak[i], 1) + ' → ' + fmt(g.after[i], 1) : '–') + '</td></tr>';
  }
  $('longest').innerHTML = h + '</tbody></table>';
}

// ------------------------------------------------------------- GC table

const TCOLS = [
  ['n', 'GC #', (i) => M.g.n[i], null, 'The runtime\'s GC number'],
  ['pstart', 'Pause start s', (i) => M.g.pstart[i], (v) => (v / 1000).toFixed(4), 'When the runtime began suspending threads'],
  ['reason', 'Trigger reason', reasonName, null, 'Why the GC happened', 'l'],
  ['gen', 'Gen', genName, null, 'Generation collected; N blocking, B background, F foreground; I induced', 'l gen'],
  ['susp', 'Suspend ms', (i) => M.g.susp[i], fmtMs, 'Time to stop the threads'],
  ['pause', 'Pause ms', (i) => M.g.pause[i], fmtMs, 'Threads stopped: SuspendEE begin to RestartEE end (summed over a background GC\'s stops)'],
  ['pct', '% pause time', (i) => M.g.pct[i], (v) => fmt(v, 1), 'Pause as a share of the time since the previous pause ended'],
  ['dur', 'GC ms', (i) => M.g.dur[i], fmtMs, 'GC start to GC end: the GC\'s own work'],
  ['alloc', 'Gen0 alloc MB', (i) => M.g.alloc[i], (v) => fmt(v, 3), 'Allocated in gen0 since the previous GC'],
  ['rate', 'Alloc MB/s', allocRate, (v) => fmt(v, 1), 'Gen0 allocation rate since the previous GC'],
  ['peak', 'Peak MB', (i) => M.g.peak[i], (v) => fmt(v, 3), 'Heap size when the GC started'],
  ['after', 'After MB', (i) => M.g.after[i], (v) => fmt(v, 3), 'Heap size after the GC'],
  ['ratio', 'Peak/After', (i) => (M.g.peak[i] !== null && M.g.after[i] > 0 ? M.g.peak[i] / M.g.after[i] : null), (v) => fmt(v, 2), ''],
  ['promo', 'Promoted MB', (i) => M.g.promo[i], (v) => fmt(v, 3), 'Survived the GC'],
  ['s0', 'Gen0 MB', (i) => M.g.size[0][i], (v) => fmt(v, 3), 'Gen0 size after'],
  ['v0', 'Gen0 surv %', (i) => M.g.surv[0][i], (v) => fmt(v, 1), ''],
  ['f0', 'Gen0 frag %', (i) => M.g.frag[0][i], (v) => fmt(v, 1), ''],
  ['s1', 'Gen1 MB', (i) => M.g.size[1][i], (v) => fmt(v, 3), ''],
  ['v1', 'Gen1 surv %', (i) => M.g.surv[1][i], (v) => fmt(v, 1), ''],
  ['f1', 'Gen1 frag %', (i) => M.g.frag[1][i], (v) => fmt(v, 1), ''],
  ['s2', 'Gen2 MB', (i) => M.g.size[2][i], (v) => fmt(v, 3), ''],
  ['v2', 'Gen2 surv %', (i) => M.g.surv[2][i], (v) => fmt(v, 1), ''],
  ['f2', 'Gen2 frag %', (i) => M.g.frag[2][i], (v) => fmt(v, 1), ''],
  ['s3', 'LOH MB', (i) => M.g.size[3][i], (v) => fmt(v, 3), ''],
  ['v3', 'LOH surv %', (i) => M.g.surv[3][i], (v) => fmt(v, 1), ''],
  ['f3', 'LOH frag %', (i) => M.g.frag[3][i], (v) => fmt(v, 1), ''],
  ['s4', 'POH MB', (i) => M.g.size[4][i], (v) => fmt(v, 3), ''],
  ['fin', 'Finalize surv MB', (i) => M.g.fin[i], (v) => fmt(v, 3), 'Promoted for finalization'],
  ['pinned', 'Pinned obj', (i) => M.g.pinned[i], (v) => fmtInt(v), 'Pinned objects'],
];

function renderFilters() {
  const f = S.filt;
  const reasons = new Map();
  for (let i = 0; i < M.g.reason.length; i++) reasons.set(String(M.g.reason[i]), reasonName(i));
  let h = '<span class="seg" id="f-gen">' + [0, 1, 2].map((k) => '<button data-k="' + k + '" class="' + (f.gen[k] ? 'on' : '') + '">gen' + k + '</button>').join('') + '</span>';
  h += '<span class="seg" id="f-type">' + [0, 1, 2].map((k) => '<button data-k="' + k + '" class="' + (f.type[k] ? 'on' : '') + '">' + TYPE_NAME[k] + '</button>').join('') + '</span>';
  h += '<select id="f-reason"><option value="all">all reasons</option>' + [...reasons.entries()].sort((x, y) => x[1].localeCompare(y[1]))
    .map(([k, v]) => '<option value="' + esc(k) + '"' + (f.reason === k ? ' selected' : '') + '>' + esc(v) + '</option>').join('') + '</select>';
  const box = $('filters');
  if (box.getAttribute('data-sig') !== h) { box.innerHTML = h; box.setAttribute('data-sig', h); }
}

function rowHTML(i) {
  let tr = '<tr class="g' + gen3(i) + '" data-gc-index="' + M.g.n[i] + '" data-i="' + i + '">';
  for (const c of TCOLS) {
    const v = c[2](i);
    const txt = v === null || v === undefined ? '–' : c[3] ? c[3](v) : esc(v);
    let cls = c[5] || '';
    if (v === null || v === undefined) cls += ' na';
    if (c[0] === 'gen' && !M.g.complete[i]) cls += ' warn';
    tr += '<td' + (cls ? ' class="' + cls.trim() + '"' : '') + '>' + txt + '</td>';
  }
  return tr + '</tr>';
}

// A live table in its default order (newest first) only gains rows at the
// top: it adds them and drops as many at the bottom.
const TBL = { key: '', next: 0 };
function renderTable() {
  renderFilters();
  const [a, b] = rowRange();
  const key = [S.sort.key, S.sort.dir, JSON.stringify(S.filt), S.sel ? S.sel.join(',') : '', S.tableLimit, M.epoch].join('|');
  const tbody = $('gctable').tBodies[0];
  let count = 0;
  for (let i = a; i < b; i++) if (passes(i)) count++;
  if (M.live && S.sort.key === 'n' && S.sort.dir < 0 && key === TBL.key && tbody && TBL.next <= b) {
    let h = '';
    for (let i = b - 1; i >= Math.max(TBL.next, a); i--) if (passes(i)) h += rowHTML(i);
    if (h) tbody.insertAdjacentHTML('afterbegin', h);
    while (tbody.rows.length > S.tableLimit) tbody.lastElementChild.remove();
    TBL.next = b;
    tableFooter(count, Math.min(count, S.tableLimit), a, b);
    return;
  }
  const rows = [];
  for (let i = a; i < b; i++) if (passes(i)) rows.push(i);
  const col = TCOLS.find((c) => c[0] === S.sort.key) || TCOLS[0];
  const dir = S.sort.dir;
  if (col[0] !== 'n') {
    const get = col[2];
    const keys = new Map(rows.map((i) => [i, get(i)]));
    rows.sort((x, y) => {
      const p = keys.get(x), q = keys.get(y);
      if (p === q) return (x - y) * dir;
      if (p === null || p === undefined) return 1;
      if (q === null || q === undefined) return -1;
      return (p < q ? -1 : 1) * dir;
    });
  } else if (dir < 0) rows.reverse();
  const limit = Math.min(rows.length, S.tableLimit);
  let h = '<thead><tr>' + TCOLS.map((c) => '<th data-k="' + c[0] + '" title="' + esc(c[4] || '') + '" class="' + (c[5] && c[5].startsWith('l') ? 'l ' : '') +
    (c[0] === S.sort.key ? 'sorted' + (S.sort.dir < 0 ? ' desc' : '') : '') + '">' + esc(c[1]) + '</th>').join('') + '</tr></thead><tbody>';
  const parts = [];
  for (let r = 0; r < limit; r++) parts.push(rowHTML(rows[r]));
  $('gctable').innerHTML = h + parts.join('') + '</tbody>';
  TBL.key = key; TBL.next = b;
  tableFooter(rows.length, limit, a, b);
}
function tableFooter(count, shown, a, b) {
  $('gctable').setAttribute('data-rows', String(count));
  const total = M.g.n.length;
  $('table-sub').textContent = fmtInt(count) + ' of ' + fmtInt(total) + ' GCs' + (S.sel ? ' (selection' + (count !== b - a ? ', filtered' : '') + ')' : (count !== total ? (M.live ? ' (in the live window, filtered)' : ' (filtered)') : '')) +
    (shown < count ? ' · showing ' + (M.live && S.sort.key === 'n' && S.sort.dir < 0 ? 'the newest ' : 'the first ') + fmtInt(shown) : '');
  const more = $('table-more');
  const next = Math.min(count - shown, 2000);
  const html = count > shown ? '<button id="more-rows">show ' + fmtInt(next) + ' more rows' + (next < count - shown ? ' (of ' + fmtInt(count - shown) + ')' : '') + '</button>' : '';
  if (more.innerHTML !== html) more.innerHTML = html;
}

// ------------------------------------------------------------- flame graph

function prepareFlame(c) {
  const n = c.node_depth.length;
  const parent = new Int32Array(n);
  const stack = [];
  for (let i = 0; i < n; i++) {
    const d = c.node_depth[i];
    stack.length = d;
    parent[i] = d > 0 ? stack[d - 1] : -1;
    stack.push(i);
  }
  const ns = c.stack_node.length;
  const runStart = new Int32Array(ns + 1);
  for (let s = 0; s < ns; s++) runStart[s + 1] = runStart[s] + c.stack_runs[s];
  const bins = new Int32Array(c.run_bin.length);
  for (let s = 0; s < ns; s++) { let b = 0; for (let r = runStart[s]; r < runStart[s + 1]; r++) { b += c.run_bin[r]; bins[r] = b; } }
  const lower = c.frames.map((f) => f.toLowerCase());
  const ns2 = c.frames.map(namespaceOf);
  return Object.assign({}, c, { parent, runStart, bins, lower, ns: ns2, n });
}
function namespaceOf(name) {
  let s = name;
  const p = s.indexOf('(');
  if (p >= 0) s = s.slice(0, p);
  const parts = s.split('.');
  if (parts.length <= 2) return parts[0];
  return parts.slice(0, parts.length - 2).join('.');
}
function stackCounts(F) {
  const ns = F.stack_node.length;
  const out = new Float64Array(ns);
  if (!S.sel || !F.bin_ms) { for (let s = 0; s < ns; s++) out[s] = F.stack_count[s]; return out; }
  const w = F.bin_ms, a = S.sel[0], b = S.sel[1];
  for (let s = 0; s < ns; s++) {
    let sum = 0;
    for (let r = F.runStart[s]; r < F.runStart[s + 1]; r++) {
      const mid = (F.bins[r] + 0.5) * w;
      if (mid >= a && mid <= b) sum += F.run_count[r];
    }
    out[s] = sum;
  }
  return out;
}
// The flame graph's trees, in typed arrays (a trace can have millions of
// call-tree nodes): node 0 is the root, children are linked lists
// (first/next), a parent's index is below its children's. The callees
// tree is the data's own call tree; the callers tree (inverted) is built
// the first time it is shown. Values are recomputed for each time range.
function grow(a, n) { const b = new a.constructor(Math.max(n, a.length * 2)); b.set(a); return b; }
function calleesTree(F) {
  if (F.callees) return F.callees;
  const n = F.n + 1;
  const T = { n, frame: new Int32Array(n), parent: new Int32Array(n), first: new Int32Array(n).fill(-1), next: new Int32Array(n).fill(-1),
    depth: new Int32Array(n), value: new Float64Array(n), inverted: false };
  const last = new Int32Array(n).fill(-1);
  T.frame[0] = -1; T.parent[0] = -1;
  for (let i = 0; i < F.n; i++) {
    const k = i + 1, p = F.parent[i] + 1;
    T.frame[k] = F.node_frame[i]; T.parent[k] = p; T.depth[k] = F.node_depth[i] + 1;
    if (last[p] < 0) T.first[p] = k; else T.next[last[p]] = k;
    last[p] = k;
  }
  T.leaf = new Int32Array(F.stack_node.length);
  for (let s = 0; s < T.leaf.length; s++) T.leaf[s] = F.stack_node[s] + 1;
  F.callees = T;
  return T;
}
function callersTree(F) {
  if (F.callers) return F.callers;
  const nf = F.frames.length + 1;
  let cap = 1024, n = 1;
  let frame = new Int32Array(cap), parent = new Int32Array(cap), first = new Int32Array(cap).fill(-1), next = new Int32Array(cap).fill(-1), depth = new Int32Array(cap);
  let last = new Int32Array(cap).fill(-1);
  frame[0] = -1; parent[0] = -1;
  const ids = new Map(); // parent * frames + frame -> node
  const ns = F.stack_node.length;
  const pathStart = new Int32Array(ns + 1);
  let path = new Int32Array(1024), np = 0;
  for (let s = 0; s < ns; s++) {
    pathStart[s] = np;
    let cur = 0;
    for (let nd = F.stack_node[s]; nd >= 0; nd = F.parent[nd]) {
      const f = F.node_frame[nd];
      const key = cur * nf + f;
      let k = ids.get(key);
      if (k === undefined) {
        if (n === cap) {
          cap *= 2;
          frame = grow(frame, cap); parent = grow(parent, cap); depth = grow(depth, cap);
          const f2 = new Int32Array(cap).fill(-1); f2.set(first); first = f2;
          const n2 = new Int32Array(cap).fill(-1); n2.set(next); next = n2;
          const l2 = new Int32Array(cap).fill(-1); l2.set(last); last = l2;
        }
        k = n++;
        frame[k] = f; parent[k] = cur; depth[k] = depth[cur] + 1;
        if (last[cur] < 0) first[cur] = k; else next[last[cur]] = k;
        last[cur] = k;
        ids.set(key, k);
      }
      if (np === path.length) path = grow(path, np * 2);
      path[np++] = k;
      cur = k;
    }
  }
  pathStart[ns] = np;
  F.callers = { n, frame, parent, first, next, depth, value: new Float64Array(n), inverted: true, pathStart, path };
  return F.callers;
}
// displayTree fills the tree's values with the samples of counts.
function displayTree(F, counts, inverted) {
  const T = inverted ? callersTree(F) : calleesTree(F);
  const v = T.value;
  v.fill(0);
  let total = 0;
  for (let s = 0; s < counts.length; s++) total += counts[s];
  if (!inverted) {
    for (let s = 0; s < counts.length; s++) v[T.leaf[s]] += counts[s];
    for (let k = T.n - 1; k > 0; k--) v[T.parent[k]] += v[k];
  } else {
    for (let s = 0; s < counts.length; s++) {
      const c = counts[s];
      if (!(c > 0)) continue;
      for (let r = T.pathStart[s]; r < T.pathStart[s + 1]; r++) v[T.path[r]] += c;
    }
  }
  v[0] = total;
  T.total = total;
  return T;
}
function kidsOf(T, k) {
  const kids = [];
  for (let c = T.first[k]; c >= 0; c = T.next[c]) if (T.value[c] > 0) kids.push(c);
  if (kids.length > 1) kids.sort((x, y) => T.value[y] - T.value[x] || T.frame[x] - T.frame[y]);
  return kids;
}
function hashHue(s) { let h = 2166136261; for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); } return (h >>> 0) % 360; }
const colorCache = new Map();
function frameColor(F, f) {
  const key = S.flame.color === 'namespace' ? 'n:' + F.ns[f] : 'm:' + (F.frame_mod[f] >= 0 ? F.modules[F.frame_mod[f]] : '?');
  let c = colorCache.get(key);
  if (!c) {
    const h = hashHue(key);
    // warm-to-cool categorical palette, light enough for dark text
    c = 'hsl(' + h + ',62%,' + (72 + (h % 7)) + '%)';
    colorCache.set(key, c);
  }
  return c;
}

const FLAME = { tree: null, key: '' };
function renderFlame() {
  const F = M.cpu;
  const panel = $('p-flame');
  if (!F) { panel.hidden = true; return; }
  panel.hidden = false;
  // The title says what the samples measure; a view per sampler.
  const label = F.label || 'CPU';
  $('flame-title').textContent = label.charAt(0).toUpperCase() + label.slice(1);
  const views = M.flames || [];
  let vb = '';
  if (views.length > 1) views.forEach((v, i) => { vb += '<button data-view="' + i + '"' + (i === (M.view || 0) ? ' class="on"' : '') + '>' + esc(v.label || 'CPU') + '</button>'; });
  const vs = $('flame-view');
  if (vs.innerHTML !== vb) vs.innerHTML = vb;
  vs.hidden = views.length <= 1;
  const counts = stackCounts(F);
  const inv = S.flame.dir === 'callers';
  const T = displayTree(F, counts, inv);
  FLAME.tree = T;
  const node = $('flame');
  const W = Math.max(300, widthOf(node, 1000));
  // zoom: the path of frames from the root
  let z = 0;
  for (const f of S.flame.zoom) {
    let k = -1;
    for (let c = T.first[z]; c >= 0; c = T.next[c]) if (T.frame[c] === f && T.value[c] > 0) { k = c; break; }
    if (k < 0) { S.flame.zoom = []; z = 0; break; }
    z = k;
  }
  const q = S.flame.search.trim().toLowerCase();
  const matched = q ? F.lower.map((s) => s.includes(q)) : null;
  const RH = 18;
  const out = [];
  const anc = [];
  for (let p = z; p > 0; p = T.parent[p]) anc.unshift(p);
  const zv = T.value[z] || 1;
  let maxDepth = 0;
  const items = []; // [displayIndex, x, w, depth, matchedTop]
  items.push([0, 0, W, 0, false]);
  for (const p of anc) items.push([p, 0, W, T.depth[p], false, true]);
  const walk = (k, x0, depth, inMatch) => {
    const kids = kidsOf(T, k);
    let x = x0;
    for (const c of kids) {
      const w = T.value[c] / zv * W;
      if (w < 0.8) { x += w; continue; }
      const f = T.frame[c];
      const m = matched ? matched[f] : false;
      items.push([c, x, w, depth, m && !inMatch]);
      if (depth > maxDepth) maxDepth = depth;
      walk(c, x, depth + 1, inMatch || m);
      x += w;
    }
  };
  let zInMatch = false;
  if (matched) for (const p of anc) if (matched[T.frame[p]]) zInMatch = true;
  walk(z, 0, T.depth[z] + 1, zInMatch);
  maxDepth = Math.max(maxDepth, T.depth[z]);
  const flameOrient = S.flame.orient === 'flame';
  const height = (maxDepth + 1) * RH + 2;
  const total = T.total;
  for (const it of items) {
    const [k, x, w, depth, mtop, isAnc] = it;
    const top = flameOrient ? height - (depth + 1) * RH : depth * RH;
    const f = T.frame[k];
    let cls = 'fr', style = 'left:' + x.toFixed(2) + 'px;width:' + Math.max(w - 0.5, 0.5).toFixed(2) + 'px;top:' + top + 'px';
    let name;
    if (k === 0) { cls += ' root'; name = 'all (' + fmtInt(total) + ' ' + (F.unit || 'samples') + ')'; }
    else {
      name = F.frames[f];
      cls += ' k' + F.frame_kind[f];
      if (F.frame_kind[f] === 0) style += ';background:' + frameColor(F, f);
      if (matched) cls += matched[f] ? ' match' : ' dim';
    }
    if (isAnc) cls += ' anc';
    if (w < 3) cls += ' thin';
    out.push('<div class="' + cls + '" style="' + style + '" data-n="' + k + '"' + (k ? ' data-frame="' + f + '"' : '') + ' data-value="' + T.value[k] + '"' +
      (mtop ? ' data-match-top="1"' : '') + '>' + (w > 28 ? esc(name) : '') + '</div>');
  }
  node.style.height = height + 'px';
  node.innerHTML = out.join('');
  // flame orientation: the root is at the bottom of a scrolled box
  node.parentNode.scrollTop = flameOrient ? node.parentNode.scrollHeight : 0;
  node.setAttribute('data-total', String(total));
  // search share, from the stacks (independent of what is drawn)
  const mi = $('flame-match');
  if (matched) {
    const onPath = new Uint8Array(F.n);
    for (let i = 0; i < F.n; i++) onPath[i] = matched[F.node_frame[i]] || (F.parent[i] >= 0 && onPath[F.parent[i]]) ? 1 : 0;
    let hit = 0;
    for (let s = 0; s < counts.length; s++) if (F.stack_node[s] >= 0 && onPath[F.stack_node[s]]) hit += counts[s];
    mi.textContent = fmtInt(hit) + ' of ' + fmtInt(total) + ' ' + (F.unit || 'samples') + ' match (' + fmt(total ? hit * 100 / total : 0, 2) + '%)';
    mi.setAttribute('data-match-samples', String(hit));
    mi.setAttribute('data-total-samples', String(total));
    mi.setAttribute('data-query', S.flame.search);
  } else { mi.textContent = ''; mi.removeAttribute('data-match-samples'); mi.removeAttribute('data-total-samples'); mi.removeAttribute('data-query'); }
  // breadcrumb back to the root
  let cr = '<a data-z="0">all</a>';
  for (let i = 0; i < anc.length; i++) cr += ' › <a data-z="' + (i + 1) + '">' + esc(shortName(F.frames[T.frame[anc[i]]])) + '</a>';
  $('flame-crumbs').innerHTML = anc.length ? cr : '<span>click a frame to zoom in; ' + (inv ? 'callers view: leaves (the code that ran) at the top, their callers below' : 'callees view: callers above the code they call') + '</span>';
  let sub = fmtInt(total) + ' ' + (F.unit || 'samples');
  if (F.to_ms) sub += ' in the last ' + fmtDur((F.to_ms || 0) - (F.from_ms || 0)) + ' (live)';
  else if (S.sel) sub += ' in the selection (of ' + fmtInt(F.total) + ')';
  if (F.threads) sub += ' · ' + F.threads + ' threads';
  if (F.period_ms) sub += ' · sampled every ' + fmt(F.period_ms, 2) + ' ms';
  if (F.notes && F.notes.length) sub += ' · ' + F.notes.join('; ');
  if (S.sel && !F.bin_ms) sub += ' · no sample times: the whole trace is shown';
  $('flame-sub').textContent = sub;
}
function shortName(s) { const p = s.indexOf('('); return p > 0 ? s.slice(0, p) : s; }
function setSearch(q) { S.flame.search = q; $('flame-search').value = q; invalidate('flame'); }

function flameTip(k) {
  const T = FLAME.tree, F = M.cpu;
  if (!T) return '';
  if (k === 0) return '<b>all</b> · ' + fmtInt(T.total) + ' samples';
  const f = T.frame[k];
  const mod = F.frame_mod[f] >= 0 ? F.modules[F.frame_mod[f]] : '';
  const v = T.value[k];
  let self = v;
  for (let c = T.first[k]; c >= 0; c = T.next[c]) self -= T.value[c];
  return '<div class="mono"><b>' + esc(F.frames[f]) + '</b></div>' + (mod ? '<div><span class="k">module</span> ' + esc(mod) + '</div>' : '') +
    '<div><span class="k">samples</span> ' + fmtInt(v) + ' (' + fmt(T.total ? v * 100 / T.total : 0, 2) + '%) · self ' + fmtInt(self) + '</div>';
}

// ------------------------------------------------------------ suspensions

function renderSusp() {
  const s = M.s;
  const d = S.sel || (M.live && S.liveWindow > 0 ? domain() : null);
  const rows = [];
  for (let i = 0; i < s.start.length; i++) if (!d || (s.start[i] >= d[0] && s.start[i] <= d[1])) rows.push(i);
  const reasons = (M.page.summary && M.page.summary.suspensions_by_reason) || [];
  let h = '';
  if (reasons.length) {
    h += '<table class="grid"><thead><tr><th class="l">reason (whole ' + (M.live ? 'session' : 'trace') + ')</th><th>count</th><th>total ms</th><th>max ms</th><th>suspend ms</th><th>incomplete</th></tr></thead><tbody>';
    for (const r of reasons) h += '<tr><td class="l">' + esc(r.reason) + '</td><td>' + fmtInt(r.count) + '</td><td>' + fmtMs(r.total_ms) + '</td><td>' + fmtMs(r.max_ms) + '</td><td>' + fmtMs(r.total_suspend_ms) + '</td><td>' + r.incomplete + '</td></tr>';
    h += '</tbody></table>';
  }
  if (rows.length) {
    rows.sort((x, y) => s.pause[y] - s.pause[x]);
    h += '<div class="sub" style="margin:10px 0 4px">non-GC suspensions' + (d ? ' in range' : '') + ', longest first</div><table class="grid"><thead><tr><th class="l">reason</th><th>start s</th><th>pause ms</th><th>suspend ms</th><th>thread</th></tr></thead><tbody>';
    for (const i of rows.slice(0, 50)) {
      h += '<tr><td class="l">' + esc(M.suspReasons[s.reason[i]] || s.reason[i]) + (s.incomplete[i] ? ' (incomplete)' : '') + '</td><td>' + (s.start[i] / 1000).toFixed(4) + '</td><td>' + fmtMs(s.pause[i]) +
        '</td><td>' + fmtMs(s.susp[i]) + '</td><td>' + s.thread[i] + '</td></tr>';
    }
    h += '</tbody></table>';
  }
  $('susp-sub').textContent = rows.length ? fmtInt(rows.length) + ' non-GC suspensions' : 'no suspension other than GCs and the sample profiler\'s';
  $('susp').innerHTML = h || '<div class="empty">' + (M.live ? 'No runtime suspension in this session yet.' : 'No runtime suspension in this trace.') + '</div>';
}

// ------------------------------------------------------------ findings

// renderFindings: clrspy triage's findings over the whole trace, most
// severe first (the page's selection does not change them).
function renderFindings() {
  const F = M.page.findings;
  const panel = $('p-findings');
  if (!F || !F.length) { panel.hidden = true; return; }
  panel.hidden = false;
  const above = F.filter((f) => f.severity !== 'info').length;
  $('findings-sub').textContent = above ? above + ' above info · whole trace · thresholds in docs/TRIAGE.md' : 'nothing above info · whole trace';
  let h = '<table class="grid findings"><tbody>';
  for (const f of F) {
    const ev = Object.keys(f.evidence || {}).filter((k) => typeof f.evidence[k] !== 'object').sort().map((k) => k + '=' + f.evidence[k]).join(' ');
    h += '<tr class="sev-' + esc(f.severity) + '"><td class="l"><span class="sev">' + esc(f.severity) + '</span></td><td class="l">' + esc(f.area) +
      '</td><td class="l wrap"><b>' + esc(f.title) + '</b><div class="sub">' + esc(ev) + '</div><div class="mono sub">' + esc(f.next) + '</div></td></tr>';
  }
  $('findings').innerHTML = h + '</tbody></table>';
}

// ------------------------------------------------------------ locks, heap

function renderLocks() {
  const L = M.page.locks;
  const panel = $('p-locks');
  if (!L) { panel.hidden = true; return; }
  panel.hidden = false;
  $('locks-sub').textContent = fmtInt(L.contentions) + ' waits · ' + fmtMs(L.total_ms) + ' ms waited · longest ' + fmtMs(L.max_ms) + ' ms' + (L.still_waiting ? ' · ' + L.still_waiting + ' still waiting' : '');
  let h = '<table class="grid"><thead><tr><th class="l">lock</th><th class="l">type</th><th>waits</th><th>total ms</th><th>mean ms</th><th>max ms</th><th class="l">owners (waits, ms)</th></tr></thead><tbody>';
  for (const l of L.locks) {
    h += '<tr title="' + esc(l.stack.join('\n')) + '"><td class="l mono">' + esc(l.id) + '</td><td class="l">' + esc(l.type || '(unknown)') + '</td><td>' + fmtInt(l.waits) + '</td><td><b>' + fmtMs(l.total_ms) +
      '</b></td><td>' + fmtMs(l.mean_ms) + '</td><td>' + fmtMs(l.max_ms) + '</td><td class="l wrap">' + esc(l.owners.join(' · ')) + '</td></tr>';
    if (l.stack.length) h += '<tr><td></td><td colspan="6" class="stack">waiting in ' + esc(l.stack.slice(0, 4).join(' ← ')) + '</td></tr>';
  }
  h += '</tbody></table>';
  if (L.more) h += '<div class="sub">' + L.more + ' more locks: ' + fmtInt(L.more_waits) + ' waits, ' + fmtMs(L.more_ms) + ' ms (clrspy locks lists them all)</div>';
  if (L.notes && L.notes.length) h += '<div class="sub" style="margin-top:6px">' + L.notes.map(esc).join('<br>') + '</div>';
  $('locks').innerHTML = h;
}

function renderExceptions() {
  const E = M.page.exceptions;
  const panel = $('p-exc');
  if (!E) { panel.hidden = true; return; }
  panel.hidden = false;
  $('exc-sub').textContent = fmtInt(E.thrown) + ' thrown · ' + fmtInt(E.caught) + ' caught' + (E.uncaught ? ' · ' + fmtInt(E.uncaught) + ' uncaught' : '') + (E.open ? ' · ' + E.open + ' in dispatch at the end' : '');
  let h = '<table class="grid"><thead><tr><th class="l">type</th><th>count</th><th>caught</th><th class="l">thrown from</th><th class="l">caught in</th><th class="l">messages</th></tr></thead><tbody>';
  const list = xs => xs.map(x => esc(x.site) + ' (' + fmtInt(x.count) + ')').join('<br>');
  for (const t of E.types) {
    const stack = t.sites.length ? t.sites[0].stack.join('\n') : '';
    h += '<tr title="' + esc(stack) + '"><td class="l">' + esc(t.type) + '</td><td><b>' + fmtInt(t.count) + '</b></td><td>' + fmtInt(t.caught) +
      '</td><td class="l wrap">' + list(t.sites) + '</td><td class="l wrap">' + list(t.catches) + '</td><td class="l wrap">' + list(t.patterns) + '</td></tr>';
  }
  h += '</tbody></table>';
  if (E.more) h += '<div class="sub">' + E.more + ' more types</div>';
  if (E.notes && E.notes.length) h += '<div class="sub" style="margin-top:6px">' + E.notes.map(esc).join('<br>') + '</div>';
  $('exc').innerHTML = h;
}

// The threads section: clrspy stacks' snapshot as the session ended (the
// deadlocks, then each group of threads with the same stack).
function renderStacks() {
  const S = M.page.stacks;
  const panel = $('p-stacks');
  if (!S) { panel.hidden = true; return; }
  panel.hidden = false;
  const waits = Object.keys(S.by_wait_kind || {}).sort().map(k => k + ' ' + S.by_wait_kind[k]).join(', ');
  $('stacks-sub').textContent = fmtInt(S.threads) + ' threads, ' + fmtInt(S.sampled) + ' with managed stacks · waits: ' + waits +
    ' · the snapshot paused the target ' + fmtMs(S.paused_ms) + ' ms (clrspy stacks --pid gives every frame)';
  let h = '';
  for (const d of S.deadlocks.concat(S.hang_chains)) h += '<div class="partial">' + esc(d) + '</div>';
  h += '<table class="grid"><thead><tr><th>threads</th><th class="l">wait</th><th class="l">stack (newest first)</th></tr></thead><tbody>';
  for (const g of S.groups) {
    h += '<tr title="' + esc(g.frames.join('\n')) + '"><td><b>' + fmtInt(g.count) + '</b></td><td class="l">' + esc(g.wait_kind) + '</td><td class="l mono">' +
      g.frames.slice(0, 6).map(esc).join('<br>') + (g.frames.length > 6 ? '<br>… ' + (g.frames.length - 6) + ' more' : '') + '</td></tr>';
  }
  h += '</tbody></table>';
  $('stacks').innerHTML = h;
}

// ---------------------------------------------------------- memory chart

// renderMemory draws the memory split over time (clrspy memory's parts,
// stacked in their order, gc_heap at the bottom) on the timeline's x axis,
// with the cgroup's limit as a line when it is within reach. Each area
// says its series (data-kind, data-mb: the part's MiB at each sample) and
// the chart its scale (data-ymax-mb, data-y0, data-y1), so tests read
// what is drawn.
function renderMemory() {
  const P = M.page.memory;
  const panel = $('p-memory');
  if (!P || !P.t_ms.length) { panel.hidden = true; return; }
  panel.hidden = false;
  const node = $('memchart');
  const W = plotWidth(node), H = 220;
  const n = P.t_ms.length;
  const d = domain();
  const x = xScale(d, W);
  const y0 = H - 24, y1 = 28;
  const MiB = 1 << 20;
  let top = 0;
  for (let i = 0; i < n; i++) { let s = 0; for (let k = 0; k < P.kinds.length; k++) s += P.bytes[k][i]; top = Math.max(top, s, P.rss_bytes[i]); }
  // the limit line shows when it is at most twice the largest RSS (a far
  // limit would flatten the parts)
  const showLimit = P.limit_bytes > 0 && P.limit_bytes <= 2 * top;
  const hi = niceMax(Math.max(top, showLimit ? P.limit_bytes : 0) / MiB);
  const y = (v) => y0 - v / hi * (y0 - y1);
  const svg = el('svg', { width: W, height: H, 'data-ymax-mb': hi, 'data-y0': y0, 'data-y1': y1 });
  const ax = el('g', { class: 'ax' }, svg);
  for (const v of ticks(0, hi, 4)) {
    el('line', { x1: TL.ml, x2: W - TL.mr, y1: y(v), y2: y(v) }, ax);
    const t = el('text', { x: TL.ml - 6, y: y(v) + 3.5, 'text-anchor': 'end' }, ax); t.textContent = String(+v.toFixed(1));
  }
  const lab = el('text', { x: 12, y: (y0 + y1) / 2, class: 'ylabel', transform: 'rotate(-90 12 ' + ((y0 + y1) / 2) + ')', 'text-anchor': 'middle' }, svg);
  lab.textContent = 'RSS MiB';
  timeAxis(ax, d, x, W, y0);
  const clipId = 'mc' + Math.random().toString(36).slice(2);
  const cp = el('clipPath', { id: clipId }, el('defs', {}, svg));
  el('rect', { x: TL.ml, y: 0, width: W - TL.ml - TL.mr, height: H }, cp);
  const plot = el('g', { 'clip-path': 'url(#' + clipId + ')' }, svg);
  // each area spans from the stack below it (base) to base + the part
  const base = new Array(n).fill(0);
  const legend = [];
  for (let k = 0; k < P.kinds.length; k++) {
    const v = P.bytes[k];
    let upper = '', lower = '';
    const mb = [];
    for (let i = 0; i < n; i++) {
      const xs = x(P.t_ms[i]).toFixed(1);
      upper += (i ? 'L' : 'M') + xs + ' ' + y((base[i] + v[i]) / MiB).toFixed(2);
      mb.push(+(v[i] / MiB).toFixed(3));
    }
    for (let i = n - 1; i >= 0; i--) lower += 'L' + x(P.t_ms[i]).toFixed(1) + ' ' + y(base[i] / MiB).toFixed(2);
    for (let i = 0; i < n; i++) base[i] += v[i];
    const p = el('path', { d: upper + lower + 'Z', class: 'mem-' + P.kinds[k], 'data-kind': P.kinds[k], 'data-mb': mb.join(',') }, plot);
    const tt = el('title', {}, p); tt.textContent = P.labels[k] + ': ' + fmtBytes(v[0]) + ' → ' + fmtBytes(v[n - 1]);
    legend.push([P.labels[k] + ' ' + fmtBytes(v[n - 1]), 'mem-' + P.kinds[k]]);
  }
  if (showLimit) {
    el('line', { x1: TL.ml, x2: W - TL.mr, y1: y(P.limit_bytes / MiB), y2: y(P.limit_bytes / MiB), class: 'memlimit', 'data-limit-mb': +(P.limit_bytes / MiB).toFixed(3) }, plot);
    legend.push(['cgroup limit ' + fmtBytes(P.limit_bytes), 'memlimit']);
  }
  const lg = el('g', {}, svg);
  let lx = TL.ml + 4;
  for (const [name, cls] of legend) {
    if (cls === 'memlimit') el('line', { x1: lx, x2: lx + 12, y1: 6, y2: 6, class: cls }, lg);
    else el('rect', { x: lx, y: 2, width: 10, height: 8, class: cls }, lg);
    const t = el('text', { x: lx + 15, y: 10, class: 'ylabel' }, lg); t.textContent = name;
    lx += 24 + name.length * 6.2;
  }
  node.replaceChildren(svg);
  brush(node, svg, W, y1, y0);
  const last = P.rss_bytes[n - 1];
  $('memory-sub').textContent = n + ' samples · RSS ' + fmtBytes(P.rss_bytes[0]) + ' → ' + fmtBytes(last) +
    (P.limit_bytes > 0 ? ' · cgroup limit ' + fmtBytes(P.limit_bytes) + ', headroom ' + fmtBytes(Math.max(0, P.limit_bytes - P.usage_bytes)) : '') +
    (P.judgement ? ' · ' + P.judgement : '');
}

function renderThreadPool() {
  const P = M.page.thread_pool;
  const panel = $('p-threadpool');
  if (!P) { panel.hidden = true; return; }
  panel.hidden = false;
  const reasons = Object.keys(P.by_reason || {}).sort().map(k => k + ' ' + P.by_reason[k]).join(', ');
  $('threadpool-sub').textContent = 'at most ' + fmtInt(P.threads_max) + ' worker threads' + (P.queue_max === null ? '' : ' · queue at most ' + fmtInt(P.queue_max)) +
    ' · ' + fmtInt(P.injections) + ' injections' + (reasons ? ' (' + reasons + ')' : '') + ' · ' + P.episodes.length + ' starvation episodes';
  let h = '';
  if (P.episodes.length) {
    h += '<table class="grid"><thead><tr><th>start ms</th><th>duration ms</th><th>threads</th><th>injections</th><th class="l">trigger</th></tr></thead><tbody>';
    for (const e of P.episodes) h += '<tr><td>' + fmtMs(e.start_ms) + '</td><td><b>' + fmtMs(e.end_ms - e.start_ms) + '</b></td><td>' + e.threads_before + ' → ' + e.threads_after +
      '</td><td>' + fmtInt(e.injections) + '</td><td class="l">' + esc(e.trigger) + '</td></tr>';
    h += '</tbody></table>';
  }
  if (P.sites.length) {
    h += '<div class="sub" style="margin-top:6px">blocking sites of pool threads (' + esc(P.source) + '): ' + fmtMs(P.blocked_ms) + ' ms blocked in ' + fmtInt(P.waits) + ' waits</div>';
    h += '<table class="grid"><thead><tr><th class="l">site</th><th class="l">calls</th><th>waits</th><th>blocked ms</th></tr></thead><tbody>';
    for (const s of P.sites) {
      h += '<tr title="' + esc(s.stack.join('\n')) + '"><td class="l mono">' + esc(s.site) + (s.sync_over_async ? ' <b>sync-over-async</b>' : '') + '</td><td class="l mono">' + esc(s.calls) +
        '</td><td>' + fmtInt(s.waits) + '</td><td><b>' + fmtMs(s.blocked_ms) + '</b></td></tr>';
    }
    h += '</tbody></table>';
  }
  if (P.notes && P.notes.length) h += '<div class="sub" style="margin-top:6px">' + P.notes.map(esc).join('<br>') + '</div>';
  $('threadpool').innerHTML = h;
}

// The requests section (a trace with ASP.NET Core's request events):
// per route latency and what GC pauses cost, then the GCs that hit
// requests, the most requests first.
function renderRequests() {
  const R = M.page.requests;
  const panel = $('p-requests');
  if (!R) { panel.hidden = true; return; }
  panel.hidden = false;
  const pct = R.requests_total ? 100 * R.hit_by_pause / R.requests_total : 0;
  $('requests-sub').textContent = fmtInt(R.requests_total) + ' requests (' + R.request_events + ' events) · ' + fmtInt(R.hit_by_pause) + ' hit by a GC pause (' + fmt(pct, 1) + ' %) · ' +
    fmtMs(R.paused_ms_total) + ' ms of ' + fmtMs(R.request_ms_total) + ' ms request time paused (' + fmt(100 * R.paused_share, 2) + ' %)';
  let h = '<table class="grid"><thead><tr><th class="l">route</th><th>count</th><th>per s</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>max ms</th><th>hit by GC</th><th>paused ms</th><th>p99 hit ms</th><th>p99 not hit ms</th></tr></thead><tbody>';
  for (const r of R.routes) {
    h += '<tr><td class="l mono">' + esc((r.method ? r.method + ' ' : '') + r.route) + '</td><td><b>' + fmtInt(r.count) + '</b></td><td>' + fmt(r.rate_per_sec, 1) + '</td><td>' + fmtMs(r.p50_ms) + '</td><td>' + fmtMs(r.p90_ms) +
      '</td><td>' + fmtMs(r.p99_ms) + '</td><td>' + fmtMs(r.max_ms) + '</td><td>' + fmtInt(r.hit_by_pause) + '</td><td>' + fmtMs(r.paused_ms_total) + '</td><td>' + fmtMs(r.p99_hit_ms) + '</td><td>' + fmtMs(r.p99_not_hit_ms) + '</td></tr>';
  }
  h += '</tbody></table>';
  if (R.more_routes) h += '<div class="sub">' + R.more_routes + ' more routes (clrspy requests lists them all)</div>';
  if (R.pauses.length) {
    h += '<div class="sub" style="margin-top:6px">' + fmtInt(R.pauses_hit) + ' GCs hit requests' + (R.pauses_hit > R.pauses.length ? ' (the ' + R.pauses.length + ' that hit most below)' : '') + '</div>';
    h += '<table class="grid"><thead><tr><th>GC</th><th>start ms</th><th>pause ms</th><th>requests hit</th><th>request ms lost</th><th>slowest hit ms</th></tr></thead><tbody>';
    for (const g of R.pauses) h += '<tr><td>' + g.gc + '</td><td>' + fmtMs(g.start_ms) + '</td><td>' + fmtMs(g.pause_ms) + '</td><td><b>' + fmtInt(g.in_flight) + '</b></td><td>' + fmtMs(g.request_ms_lost) + '</td><td>' + fmtMs(g.slowest_hit_ms) + '</td></tr>';
    h += '</tbody></table>';
  }
  if (R.slowest && R.slowest.length) h += '<div class="sub" style="margin-top:6px">The ' + R.slowest.length + ' slowest requests on the GC timeline\'s clock: each bar is a request, its parts colored (GC paused, suspended, lock wait, blocked, outgoing HTTP); a GC\'s pause is drawn across every request it froze.</div><div id="requests-wf" class="chart"></div>';
  if (R.notes && R.notes.length) h += '<div class="sub" style="margin-top:6px">' + R.notes.map(esc).join('<br>') + '</div>';
  $('requests').innerHTML = h;
  if (R.slowest && R.slowest.length) renderWaterfall($('requests-wf'), R.slowest);
}

// renderWaterfall draws the slowest requests on the timeline's x axis
// (its width, margins and domain: a time is at the same x in both). A
// request's row is its bar from start to end with its segments over it;
// each GC that hit shown requests is a band over its pause (the
// timeline's pause start and length) across every row it froze.
const WF_ROW = 18, WF_BAR = 10;
function renderWaterfall(node, rows) {
  const W = plotWidth($('timeline')), d = domain();
  const x = xScale(d, W);
  const top = 6, H = top + rows.length * WF_ROW + TL.mb;
  const y0 = top + rows.length * WF_ROW;
  const svg = el('svg', { width: W, height: H, class: 'tl wf' });
  const defs = el('defs', {}, svg);
  const clip = el('clipPath', { id: 'wfclip' }, defs);
  el('rect', { x: TL.ml, y: 0, width: W - TL.ml - TL.mr, height: H }, clip);
  const ax = el('g', { class: 'ax' }, svg);
  timeAxis(ax, d, x, W, y0);
  const plot = el('g', { 'clip-path': 'url(#wfclip)' }, svg);
  const bands = el('g', {}, plot);
  const bars = el('g', {}, plot);
  // rows in start order, as the timeline reads
  const order = rows.map((r, i) => i).sort((a, b) => rows[a].start_ms - rows[b].start_ms);
  const hit = new Map(); // GC → the rows it froze
  order.forEach((ri, row) => {
    const r = rows[ri], y = top + row * WF_ROW + (WF_ROW - WF_BAR) / 2;
    const x0 = x(r.start_ms), x1 = Math.max(x(r.start_ms + r.duration_ms), x0 + 1);
    const g = el('g', { class: 'wf-req', 'data-row': row }, bars);
    const bar = el('rect', { class: 'wf-bar', x: x0.toFixed(1), y: y, width: (x1 - x0).toFixed(1), height: WF_BAR, 'data-start': r.start_ms, 'data-end': r.start_ms + r.duration_ms, 'data-gcs': r.gcs.join(' ') }, g);
    el('title', {}, bar).textContent = r.method + ' ' + r.path + (r.status ? ' ' + r.status : ' (status unknown)') + ' · ' + fmtMs(r.duration_ms) + ' ms · GC paused ' + fmtMs(r.gc_paused_ms) + ' ms · lock ' + fmtMs(r.lock_wait_ms) +
      ' ms · blocked ' + fmtMs(r.blocked_ms) + ' ms · HTTP out ' + fmtMs(r.http_out_ms) + ' ms';
    for (const sg of r.segments || []) {
      const sx = x(sg.start_ms);
      el('rect', { class: 'wf-seg ' + sg.kind, x: sx.toFixed(1), y: y, width: Math.max(x(sg.start_ms + sg.duration_ms) - sx, 1).toFixed(1), height: WF_BAR }, g);
    }
    const lab = el('text', { x: (x1 + 4).toFixed(1), y: y + WF_BAR - 1, class: 'wf-label' }, g);
    lab.textContent = r.method + ' ' + r.path + ' ' + fmtMs(r.duration_ms) + ' ms';
    for (const n of r.gcs) {
      const h = hit.get(n);
      if (h) h.push(row); else hit.set(n, [row]);
    }
  });
  for (const [n, rowsHit] of hit) {
    const i = M.byNumber.get(n);
    if (i === undefined) continue; // a GC the page has no row of
    const g = M.g, bx = x(g.pstart[i]), bw = Math.max(g.pause[i] * (W - TL.ml - TL.mr) / (d[1] - d[0]), 2);
    for (const row of rowsHit) el('rect', { class: 'wf-pause g' + gen3(i), 'data-gc': n, 'data-i': i, 'data-row': row, x: bx.toFixed(1), y: top + row * WF_ROW, width: bw.toFixed(1), height: WF_ROW }, bands);
  }
  node.replaceChildren(svg);
  brush(node, svg, W, top, y0);
}

function renderHeapTypes() {
  const H = M.page.heap;
  const panel = $('p-heap');
  if (!H) { panel.hidden = true; return; }
  panel.hidden = false;
  $('heap-sub').textContent = fmtInt(H.sampled) + ' sampled objects' + (H.movement ? '' : ' · no survival and movement events in this trace: survival unknown');
  const pc = (v) => (v === null || v === undefined ? '<td class="na">–</td>' : '<td>' + fmt(v, 1) + '</td>');
  let h = '<table class="grid"><thead><tr><th class="l">type</th><th>sampled</th><th>est. MB allocated</th><th>survive 1 GC %</th><th>reach gen2 %</th><th>die in gen2 %</th><th>alive at end</th><th>est. live MB</th></tr></thead><tbody>';
  for (const t of H.types) {
    h += '<tr><td class="l mono wrap">' + esc(t.type) + '</td><td>' + fmtInt(t.sampled) + '</td><td>' + fmt(t.est_mb, 2) + '</td>' + pc(t.survived_pct) + pc(t.gen2_pct) + pc(t.died_gen2_pct) +
      '<td>' + fmtInt(t.alive) + '</td><td>' + fmt(t.live_mb, 3) + '</td></tr>';
  }
  h += '</tbody></table>';
  if (H.more) h += '<div class="sub">' + H.more + ' more types</div>';
  $('heaptypes').innerHTML = h;
}

// ---------------------------------------------------------- heap snapshot

// The heap snapshot section: the dominator tree as an icicle (columns in
// depth-first order, as the server bounded it), the types by retained
// bytes (sortable), and the retention paths of the type clicked (the
// server precomputed them for the top types).
function prepareSnapshot(s) {
  if (!s || !s.tree) return null;
  const T = s.tree, n = T.depth.length;
  const parent = new Int32Array(n), first = new Int32Array(n).fill(-1), next = new Int32Array(n).fill(-1), last = new Int32Array(n).fill(-1);
  const stack = [];
  for (let i = 0; i < n; i++) {
    const d = T.depth[i];
    stack.length = d;
    const p = d > 0 ? stack[d - 1] : -1;
    parent[i] = p;
    stack.push(i);
    if (p >= 0) { if (last[p] < 0) first[p] = i; else next[last[p]] = i; last[p] = i; }
  }
  return Object.assign({}, s, { parent, first, next, n });
}
function fmtBytes(n) {
  if (n === null || n === undefined) return '–';
  if (n >= 1 << 30) return (n / (1 << 30)).toFixed(1) + ' GiB';
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + ' MiB';
  if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + ' KiB';
  return n + ' B';
}
function snapType(N, k) { const t = N.tree.type[k]; return t >= 0 ? N.tree.names[t] : ''; }
// The readable name of a runtime type name (type_names: Dictionary<Int64,Session>+Entry[]), a path step "TYPE ×4+" too.
function tn(N, n) {
  if (!N._tn) { N._tn = {}; for (const r of N.type_names || []) N._tn[r.type] = r.name; }
  const m = N._tn;
  if (m[n]) return m[n];
  const i = n.lastIndexOf(' ×');
  return i > 0 && m[n.slice(0, i)] ? m[n.slice(0, i)] + n.slice(i) : n;
}
function snapLabel(N, k) {
  const T = N.tree;
  if (k === 0) return 'all: ' + fmtInt(N.objects) + ' objects, ' + fmtBytes(N.bytes);
  if (T.kind[k] === 1) return tn(N, snapType(N, k)) + ' ×' + fmtInt(T.count[k]);
  if (T.kind[k] === 2) return 'other: ' + fmtInt(T.count[k]) + ' objects';
  return tn(N, snapType(N, k));
}
function snapColor(type) {
  const key = 's:' + namespaceOf(type.replace(/[`[<].*$/, ''));
  let c = colorCache.get(key);
  if (!c) { const h = hashHue(key); c = 'hsl(' + h + ',58%,' + (74 + (h % 7)) + '%)'; colorCache.set(key, c); }
  return c;
}
function renderSnapshot() {
  const N = M.snap;
  const panel = $('p-snapshot');
  // A page of a .gcdump file has nothing but the snapshot.
  // A page of clrspy memory has nothing but its memory section.
  const only = (!!N || !!M.page.memory) && !M.page.summary && !M.g.n.length && (!M.cpu || !!M.page.memory);
  for (const id of ['summary', 'p-timeline', 'p-hist', 'p-longest', 'p-table', 'p-susp']) $(id).hidden = only;
  if (!N) { panel.hidden = true; return; }
  panel.hidden = false;
  const roots = Object.keys(N.roots || {}).filter((k) => k !== 'unrooted').sort().map((k) => k + ' ' + fmtInt(N.roots[k])).join(', ');
  $('snap-sub').textContent = fmtInt(N.objects) + ' objects · ' + fmtBytes(N.bytes) +
    (N.gc ? ' · induced gen2 GC #' + N.gc + (N.pause_ms ? ', pause ' + fmtMs(N.pause_ms) + ' ms (the snapshot\'s cost to the target)' : '') : '') +
    (roots ? ' · roots: ' + roots : '') + (N.missing && N.missing.unrooted ? ' · ' + fmtInt(N.missing.unrooted) + ' unrooted objects' : '');
  const note = $('snap-note');
  note.hidden = N.complete;
  note.textContent = N.complete ? '' : '\u26a0 ' + N.note;
  panel.setAttribute('data-complete', N.complete ? '1' : '0');
  renderSnapTree(N);
  renderSnapTypes(N);
  renderSnapPaths(N);
}
function renderSnapTree(N) {
  const T = N.tree, node = $('snaptree');
  const W = Math.max(300, node.clientWidth || 1000);
  let z = S.snap.zoom < N.n ? S.snap.zoom : 0;
  const anc = [];
  for (let p = z; p >= 0; p = N.parent[p]) anc.unshift(p);
  const RH = 18, items = [];
  anc.forEach((k, d) => items.push([k, 0, W, d, k !== z]));
  const zr = T.retained[z] || 1;
  let maxDepth = anc.length - 1;
  const walk = (k, x0, depth) => {
    let x = x0;
    for (let c = N.first[k]; c >= 0; c = N.next[c]) {
      const w = T.retained[c] / zr * W;
      if (w >= 0.8) { items.push([c, x, w, depth, false]); if (depth > maxDepth) maxDepth = depth; walk(c, x, depth + 1); }
      x += w;
    }
  };
  walk(z, 0, anc.length);
  const out = [];
  for (const [k, x, w, depth, isAnc] of items) {
    let cls = 'fr', style = 'left:' + x.toFixed(2) + 'px;width:' + Math.max(w - 0.5, 0.5).toFixed(2) + 'px;top:' + depth * RH + 'px';
    const type = snapType(N, k), kind = T.kind[k];
    if (k === 0) cls += ' root';
    else if (kind === 2) cls += ' sr';
    else { style += ';background:' + snapColor(type); if (kind === 1) cls += ' sg'; }
    if (isAnc) cls += ' anc';
    if (w < 3) cls += ' thin';
    const root = T.root[k] >= 0 ? T.names[T.root[k]] : '';
    const label = snapLabel(N, k);
    out.push('<div class="' + cls + '" style="' + style + '" data-n="' + k + '" data-kind="' + kind + '" data-type="' + esc(type) + '" data-retained="' + T.retained[k] + '"' +
      (root ? ' data-root="' + esc(root) + '"' : '') + '>' + (w > 28 ? esc(label + (root && k ? ' [' + root + ']' : '')) : '') + '</div>');
  }
  node.style.height = (maxDepth + 1) * RH + 2 + 'px';
  node.innerHTML = out.join('');
  let cr = '<a data-z="0">all</a>';
  for (let i = 1; i < anc.length; i++) cr += ' › <a data-z="' + anc[i] + '">' + esc(snapLabel(N, anc[i])) + '</a>';
  $('snap-crumbs').innerHTML = anc.length > 1 ? cr : '<span>' + T.max_depth + ' levels; children retaining less than ' + fmtBytes(T.min_retained) + ' summed by type (striped) or as "other" (grey)</span>';
}
function snapTip(k) {
  const N = M.snap;
  if (!N) return '';
  const T = N.tree;
  const root = T.root[k] >= 0 ? T.names[T.root[k]] : '';
  const kind = T.kind[k];
  let h = '<div class="mono"><b>' + esc(snapLabel(N, k)) + '</b></div>';
  if (T.addr[k]) h += '<div><span class="k">address</span> ' + esc(T.addr[k]) + '</div>';
  if (root) h += '<div><span class="k">root</span> ' + esc(root) + '</div>';
  h += '<div><span class="k">retained</span> ' + fmtBytes(T.retained[k]) + ' (' + fmtInt(T.retained[k]) + ' B, ' + fmt(N.bytes ? T.retained[k] * 100 / N.bytes : 0, 2) + '% of the heap)</div>';
  if (k && kind !== 2) h += '<div><span class="k">own</span> ' + fmtBytes(T.bytes[k]) + (kind === 1 ? ' · ' + fmtInt(T.count[k]) + ' objects, each retaining less than ' + fmtBytes(T.min_retained) : '') + '</div>';
  if (kind === 2) h += '<div>children in no box above</div>';
  if (T.more[k] && kind === 0 && T.depth[k] >= T.max_depth) h += '<div><span class="k">below</span> ' + fmtInt(T.more[k]) + ' dominated objects (depth limit; clrspy snapshot --tree goes deeper)</div>';
  return h;
}
const SNAP_COLS = [
  ['type', 'type', 'l', 'The runtime\'s type name'],
  ['count', 'objects', '', 'Live objects of the type'],
  ['bytes', 'own bytes', '', 'The objects\' own sizes'],
  ['retained_bytes', 'retained bytes', '', 'The bytes only objects of the type keep alive (dominator tree), each object counted once'],
];
function renderSnapTypes(N) {
  const rows = N.types.map((_, i) => i);
  const k = S.snap.sort, dir = S.snap.dir;
  rows.sort((x, y) => {
    const p = N.types[x][k], q = N.types[y][k];
    if (p === q) return x - y;
    return (p < q ? -1 : 1) * dir;
  });
  let h = '<thead><tr>' + SNAP_COLS.map((c) => '<th data-k="' + c[0] + '" title="' + esc(c[3]) + '" class="' + c[2] + (c[0] === k ? ' sorted' + (dir < 0 ? ' desc' : '') : '') + '">' + esc(c[1]) + '</th>').join('') + '</tr></thead><tbody>';
  for (const i of rows) {
    const t = N.types[i];
    h += '<tr data-i="' + i + '" data-type="' + esc(t.type) + '" data-count="' + t.count + '" data-bytes="' + t.bytes + '" data-retained="' + t.retained_bytes + '"' + (S.snap.sel === i ? ' class="hl"' : '') +
      '><td class="l mono wrap" title="' + esc(t.type) + '">' + esc(tn(N, t.type)) + '</td><td>' + fmtInt(t.count) + '</td><td title="' + fmtInt(t.bytes) + ' B">' + fmtBytes(t.bytes) + '</td><td title="' + fmtInt(t.retained_bytes) + ' B"><b>' + fmtBytes(t.retained_bytes) + '</b></td></tr>';
  }
  $('snaptypes').innerHTML = h + '</tbody>';
  $('snaptypes-more').textContent = N.more_types ? N.more_types + ' more types (clrspy snapshot --top 0 lists them all)' : '';
}
function renderSnapPaths(N) {
  const box = $('snappaths');
  const i = S.snap.sel;
  if (i === null || !N.types[i]) { box.innerHTML = '<div class="empty">Click a type (or a box of the tree) for its retention paths: why its objects are alive.</div>'; box.removeAttribute('data-type'); return; }
  const t = N.types[i], w = (N.why || [])[i];
  box.setAttribute('data-type', t.type);
  let h = '<div class="sub">why is <b class="mono">' + esc(tn(N, t.type)) + '</b> alive: the shortest paths from a GC root, grouped by the types along them</div>';
  if (!w) {
    box.innerHTML = h + '<div class="empty">The page holds the paths of the top ' + (N.why || []).length + ' types; clrspy snapshot --why ' + esc(t.type) + ' gives this one\'s.</div>';
    return;
  }
  h += '<table class="grid paths"><thead><tr><th class="l">root kind</th><th class="l">root</th><th class="l">path</th><th>objects</th><th>bytes</th></tr></thead><tbody>';
  for (const p of w.paths) {
    h += '<tr data-root-kind="' + esc(p.root_kind) + '" data-root="' + esc(p.root) + '" data-count="' + p.count + '" data-bytes="' + p.bytes + '"><td class="l">' + esc(p.root_kind) + '</td><td class="l mono">' + esc(p.root) +
      '</td><td class="l mono pathcell">' + p.path.map((x) => esc(tn(N, x))).join(' › ') + '</td><td>' + fmtInt(p.count) + '</td><td>' + fmtBytes(p.bytes) + '</td></tr>';
  }
  h += '</tbody></table>';
  if (w.more) h += '<div class="sub">' + w.more + ' more paths (clrspy snapshot --why lists them all)</div>';
  box.innerHTML = h;
}
function snapSelectType(type) {
  const N = M.snap;
  const i = N.types.findIndex((t) => t.type === type);
  S.snap.sel = i >= 0 ? i : null;
}

// ---------------------------------------------------------------- legend

function renderLegend() {
  const circle = (c) => '<svg width="12" height="12"><circle cx="6" cy="6" r="4" fill="' + c + '" stroke="' + c + '"/></svg>';
  let h = [0, 1, 2].map((g) => '<span><i style="background:var(--g' + g + ')"></i>gen' + g + '</span>').join('');
  h += '<span>' + circle('#667085') + 'blocking</span>';
  h += '<span><svg width="12" height="12"><path d="M1.5 6L6 1.5L10.5 6L6 10.5Z" fill="#fff" stroke="#667085" stroke-width="1.5"/></svg>background</span>';
  h += '<span><svg width="12" height="12"><path d="M2 10L6 2L10 10Z" fill="#667085"/></svg>foreground</span>';
  $('legend').innerHTML = h;
}

// ------------------------------------------------------------ interaction

function wire() {
  renderLegend();
  $('zoom-reset').onclick = resetSelection;
  $('zoom-back').onclick = zoomBack;
  $('ylog').onchange = (e) => { S.ylog = e.target.checked; invalidate('timeline'); };
  $('live-window').onchange = (e) => { S.liveWindow = +e.target.value; invalidate('all'); };
  $('filters').addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    const k = +b.getAttribute('data-k');
    const which = b.parentNode.id === 'f-gen' ? 'gen' : 'type';
    S.filt[which][k] = !S.filt[which][k];
    invalidate('table', 'timeline');
  });
  $('filters').addEventListener('change', (e) => { if (e.target.id === 'f-reason') { S.filt.reason = e.target.value; invalidate('table', 'timeline'); } });
  $('gctable').addEventListener('click', (e) => {
    const th = e.target.closest('th');
    if (th) {
      const k = th.getAttribute('data-k');
      if (S.sort.key === k) S.sort.dir = -S.sort.dir; else { S.sort.key = k; S.sort.dir = k === 'n' || k === 'pstart' ? 1 : -1; }
      invalidate('table');
      return;
    }
    const tr = e.target.closest('tr[data-gc-index]');
    if (tr) highlightRow(tr.getAttribute('data-gc-index'), false);
  });
  $('table-more').addEventListener('click', (e) => { if (e.target.id === 'more-rows') { S.tableLimit += 2000; invalidate('table'); } });
  $('longest').addEventListener('click', (e) => {
    const tr = e.target.closest('tr[data-i]');
    if (!tr) return;
    const i = +tr.getAttribute('data-i');
    const g = M.g;
    const pad = Math.max(g.pause[i] * 0.25, 0.05);
    setSelection(g.pstart[i] - pad, g.pstart[i] + g.pause[i] + pad);
  });
  const tipOn = (node, fn) => {
    node.addEventListener('mouseover', (ev) => { const h = fn(ev.target); if (h) showTip(ev, h); });
    node.addEventListener('mousemove', (ev) => { if (!$('tip').hidden) moveTip(ev); });
    node.addEventListener('mouseleave', hideTip);
  };
  tipOn($('longest'), (t) => { const tr = t.closest && t.closest('tr[data-i]'); return tr ? gcTip(+tr.getAttribute('data-i')) : ''; });
  tipOn($('flame'), (t) => { const d = t.closest && t.closest('.fr'); return d ? flameTip(+d.getAttribute('data-n')) : ''; });
  $('flame').addEventListener('click', (e) => {
    const d = e.target.closest('.fr');
    if (!d) return;
    const T = FLAME.tree;
    const path = [];
    for (let k = +d.getAttribute('data-n'); k > 0; k = T.parent[k]) path.unshift(T.frame[k]);
    S.flame.zoom = path;
    invalidate('flame');
  });
  $('flame-crumbs').addEventListener('click', (e) => {
    const a = e.target.closest('a[data-z]');
    if (!a) return;
    S.flame.zoom = S.flame.zoom.slice(0, +a.getAttribute('data-z'));
    invalidate('flame');
  });
  let searchTimer = 0;
  $('flame-search').addEventListener('input', (e) => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => { S.flame.search = e.target.value; invalidate('flame'); }, 120);
  });
  const seg = (id, key) => $(id).addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    S.flame[key] = b.getAttribute('data-v');
    for (const x of $(id).children) x.classList.toggle('on', x === b);
    if (key === 'dir') S.flame.zoom = [];
    invalidate('flame');
  });
  seg('flame-orient', 'orient'); seg('flame-dir', 'dir'); seg('flame-color', 'color');
  $('flame-view').addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b || !M.flames) return;
    const i = Number(b.getAttribute('data-view'));
    if (!M.flames[i] || i === M.view) return;
    M.view = i; M.cpu = M.flames[i]; S.flame.zoom = [];
    invalidate('flame');
  });
  tipOn($('snaptree'), (t) => { const d = t.closest && t.closest('.fr'); return d ? snapTip(+d.getAttribute('data-n')) : ''; });
  $('snaptree').addEventListener('click', (e) => {
    const d = e.target.closest('.fr');
    if (!d || !M.snap) return;
    const k = +d.getAttribute('data-n');
    S.snap.zoom = k;
    if (k && M.snap.tree.kind[k] !== 2) snapSelectType(d.getAttribute('data-type'));
    invalidate('snapshot');
  });
  $('snap-crumbs').addEventListener('click', (e) => {
    const a = e.target.closest('a[data-z]');
    if (!a) return;
    S.snap.zoom = +a.getAttribute('data-z');
    invalidate('snapshot');
  });
  $('snaptypes').addEventListener('click', (e) => {
    const th = e.target.closest('th');
    if (th) {
      const k = th.getAttribute('data-k');
      if (S.snap.sort === k) S.snap.dir = -S.snap.dir; else { S.snap.sort = k; S.snap.dir = k === 'type' ? 1 : -1; }
      invalidate('snapshot');
      return;
    }
    const tr = e.target.closest('tr[data-i]');
    if (!tr) return;
    S.snap.sel = +tr.getAttribute('data-i');
    invalidate('snapshot');
  });
  let rz = 0;
  window.addEventListener('resize', () => { clearTimeout(rz); rz = setTimeout(() => invalidate('all'), 150); });
}

// ------------------------------------------------------------------ live

function startLive(cfg) {
  M.live = true;
  S.sort = { key: 'n', dir: -1 };
  S.tableLimit = 100; // the newest; a live table of thousands of rows costs every redraw
  $('live-ctl').hidden = false;
  $('live-window').hidden = false;
  $('foot').textContent = 'clrspy live view';
  let ws = null, current = '';
  const state = (s, cls) => { const e = $('live-state'); e.textContent = s; e.className = 'live-state ' + (cls || ''); rootAttr('live-state', cls || s); };
  const loadTargets = () => fetch(cfg.targets, { cache: 'no-store' }).then((r) => r.json()).then((ts) => {
    const sel = $('target');
    const sig = JSON.stringify(ts.map((t) => [t.id, t.name, t.ended]));
    if (sel.getAttribute('data-sig') !== sig) {
      sel.innerHTML = ts.map((t) => '<option value="' + esc(t.id) + '">' + esc(t.name + (t.pid ? ' (pid ' + t.pid + ')' : '') + (t.ended ? ' — ended' : '')) + '</option>').join('');
      sel.setAttribute('data-sig', sig);
      if (current) sel.value = current;
    }
    if (!current && ts.length) connect(ts[0].id);
  }).catch(() => {});
  const connect = (id) => {
    if (ws) { ws.onclose = null; ws.close(); }
    current = id;
    $('target').value = id;
    const u = new URL(cfg.socket, location.href);
    u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    u.searchParams.set('target', id);
    state('connecting');
    ws = new WebSocket(u.href);
    // Messages are applied as they come (appending rows is cheap); the
    // drawing they call for happens once per frame, however many came.
    ws.onmessage = (ev) => apply(JSON.parse(ev.data));
    ws.onopen = () => state('live', 'on');
    ws.onclose = () => { if (!M.ended) state('disconnected', 'ended'); };
  };
  $('target').onchange = (e) => connect(e.target.value);
  loadTargets();
  setInterval(loadTargets, 2000);
}

function apply(msg) {
  const t0 = performance.now();
  STATS.updates++;
  if (msg.type === 'snapshot') {
    M.ended = false;
    loadPage(msg.page);
  } else if (msg.type === 'update' || msg.type === 'end') {
    const from = M.g.n.length;
    const added = appendGC(M.g, msg.gcs);
    if (added) { indexRows(from); sortRows(from); }
    appendSusp(M.s, msg.suspensions);
    Object.assign(M.gcReasons, msg.gc_reasons || {});
    Object.assign(M.suspReasons, msg.suspend_reasons || {});
    for (const k of ['summary', 'input', 'run', 'locks', 'heap', 'thread_pool', 'exceptions', 'requests']) if (msg[k]) M.page[k] = msg[k];
    if (msg.t1_ms !== undefined) M.t1 = Math.max(M.t1, msg.t1_ms);
    if (msg.cpu) {
      const f = prepareFlame(msg.cpu);
      if (!M.flames || !M.flames.length) { M.flames = [f]; M.view = 0; } else M.flames[0] = f;
      if (!M.view) M.cpu = f;
      invalidate('flame');
    }
    invalidate('timeline', 'selinfo', 'summary', 'susp');
    if (added) invalidate('heap', 'hist', 'longest', 'table');
    const sig = JSON.stringify([M.page.run, (M.page.input || {}).partial, (M.page.input || {}).complete]);
    if (sig !== M.headerSig) { M.headerSig = sig; invalidate('header'); }
    if (msg.locks) invalidate('locks');
    if (msg.heap) invalidate('heaptypes');
    if (msg.thread_pool) invalidate('threadpool');
    if (msg.exceptions) invalidate('exc');
    if (msg.requests) invalidate('requests');
    if (msg.type === 'end') {
      M.ended = true;
      invalidate('all'); // everything, now: nothing more will come
      const e = $('live-state'); e.textContent = 'ended'; e.className = 'live-state ended';
      rootAttr('live-state', 'ended');
    }
  }
  rootAttr('gcs', String(M.g.n.length));
  STATS.applyMs += performance.now() - t0;
}

// ------------------------------------------------------------------ start

STATS.scriptAt = performance.now();
wire();
let data;
try { data = JSON.parse($('clrspy-data').textContent); } catch (e) { console.error('clrspy: bad page data: ' + e); data = {}; }
STATS.parsedAt = performance.now();
if (data.live) startLive(data);
else { loadPage(data); rootAttr('gcs', String(M.g.n.length)); }
STATS.loadedAt = performance.now();
})();
