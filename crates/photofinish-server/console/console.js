/*
 * Photofinish web console (served at /console.js; no libraries, no build step).
 *
 * "/"              lists the boards the caller may read (GET /v1/boards).
 * "/?board=NAME"   shows one board: a page of entries (rank style, period, paging), a member
 *                  search showing that member's neighbours (/around), a histogram of the top
 *                  1000 scores, and live updates from the board's event stream (SSE).
 *
 * Auth: the credential (API key or player token) is kept in sessionStorage under
 * "photofinish.credential" and sent as "Authorization: Bearer <token>". EventSource cannot
 * set headers, so the events URL carries "?access_token=<token>" instead.
 *
 * Scores are i64 and may exceed 2^53: responses are parsed so that such scores stay exact
 * decimal strings (see parseJson); only the histogram converts them to (inexact) numbers.
 *
 * Test hooks: body.dataset.ready = "1" after the first successful table render and
 * body.dataset.renders counts renders; row/id hooks are listed in index.html's markup.
 */
'use strict';

const CRED_KEY = 'photofinish.credential';
const RELOAD_DELAY_MS = 150;     // debounce of reloads triggered by live events
const CHANGED_MS = 5000;         // how long a row touched by an event keeps class "changed"
const MOVE_MS = 30000;           // how long an overtake arrow stays on a row
const HISTOGRAM_EVERY_MS = 5000; // at most one histogram refresh per this interval
const HISTOGRAM_SAMPLE = 1000;   // top entries sampled for the histogram
const FEED_MAX = 20;

const $ = (id) => document.getElementById(id);

const state = {
  name: null,        // board name from ?board=
  board: null,       // GET /v1/boards/{board}
  periods: [],       // ids for the period picker, current first
  period: null,      // selected period id
  ranking: 'ordinal',
  offset: 0,
  limit: 25,
  search: null,      // member whose neighbours are shown in #around
  seq: 0,            // drops answers to superseded requests
  histSeq: 0,
};

const live = {
  source: null,      // the EventSource
  retry: null,       // timer for a manual reconnect after the stream closed
  pending: new Set(),// members touched by events since the last render
  marks: new Map(),  // member -> {changedUntil, moveUntil, delta, fresh}
  ranks: new Map(),  // member -> rank last shown (same board, period and rank style)
  feed: [],
  reloadTimer: null, busy: false, again: false,
  histTimer: null, histAt: 0,
};

/* ---------- API access ---------- */

class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

const credential = () => sessionStorage.getItem(CRED_KEY) || '';
const enc = encodeURIComponent;
const boardPath = () => '/v1/boards/' + enc(state.name);

// Does JSON.parse hand the reviver the literal's source text (context.source)?
const HAS_SOURCE = (() => {
  let ok = false;
  try { JSON.parse('1', (k, v, ctx) => { ok = !!(ctx && typeof ctx.source === 'string'); return v; }); } catch (_) { /* old engine */ }
  return ok;
})();

// JSON.parse keeping "score" values beyond 2^53 exact, as decimal strings.
function parseJson(text) {
  if (HAS_SOURCE) {
    return JSON.parse(text, (key, value, ctx) =>
      key === 'score' && typeof value === 'number' && !Number.isSafeInteger(value) && ctx ? ctx.source : value);
  }
  // Fallback: quote long integer literals after a "score" key before parsing. (Inside JSON
  // strings quotes are escaped, so this cannot match text within a member name.)
  return JSON.parse(text.replace(/("score"\s*:\s*)(-?\d{16,})/g, '$1"$2"'));
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? '?' + s : '';
}

async function api(path, params) {
  const headers = { Accept: 'application/json' };
  const token = credential();
  if (token) headers.Authorization = 'Bearer ' + token;
  let res;
  try {
    res = await fetch(path + query(params), { headers, cache: 'no-store' });
  } catch (e) {
    throw new ApiError(0, 'network', 'Cannot reach the server (' + e.message + ').');
  }
  const text = await res.text();
  let body = null;
  try { body = text ? parseJson(text) : null; } catch (_) { /* not JSON */ }
  if (!res.ok) {
    const err = (body && body.error) || {};
    throw new ApiError(res.status, err.code || 'http_' + res.status, err.message || res.statusText || 'Request failed.');
  }
  return body;
}

/* ---------- small DOM helpers ---------- */

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

const fmtCount = (n) => Number(n).toLocaleString('en-US');
const pad = (n) => String(n).padStart(2, '0');

function fmtTime(iso) {
  const d = new Date(iso);
  if (isNaN(d)) return String(iso);
  return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' +
    pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
}

function fromNow(iso) {
  const ms = new Date(iso) - Date.now();
  if (isNaN(ms)) return '—';
  if (ms <= 0) return 'now';
  const m = Math.floor(ms / 60000), h = Math.floor(m / 60), d = Math.floor(h / 24);
  if (d > 0) return 'in ' + d + 'd ' + (h % 24) + 'h';
  if (h > 0) return 'in ' + h + 'h ' + (m % 60) + 'm';
  return m > 0 ? 'in ' + m + 'm' : 'in <1m';
}

// A "next reset" value that sweep() keeps counting down.
function countdown(iso) {
  if (!iso) return el('span', 'muted', 'never');
  const node = el('time', 'countdown', fromNow(iso));
  node.dateTime = iso;
  node.title = fmtTime(iso) + ' (local time)';
  return node;
}

function markRendered() {
  const body = document.body;
  body.dataset.renders = String(Number(body.dataset.renders || 0) + 1);
  body.dataset.ready = '1';
}

/* ---------- error banner ---------- */

function showError(err) {
  const box = $('error');
  let hint = '';
  if (err.status === 401) hint = 'Enter an API key or player token in the Credential field above.';
  else if (err.status === 403) hint = 'This credential may not read this board.';
  else if (err.code === 'board_not_found') hint = 'Go back to the list of boards.';
  const close = el('button', 'quiet', 'Dismiss');
  close.type = 'button';
  close.addEventListener('click', clearError);
  const text = el('span', 'banner-text');
  text.append(el('strong', null, err.code || 'error'), ' ' + err.message + (hint ? ' ' + hint : ''));
  box.replaceChildren(text, close);
  box.hidden = false;
}

function clearError() {
  $('error').hidden = true;
  $('error').replaceChildren();
}

/* ---------- boards list ---------- */

async function loadBoards() {
  try {
    const { boards } = await api('/v1/boards');
    renderBoards(boards || []);
    clearError();
    markRendered();
  } catch (err) {
    showError(err);
  }
}

function renderBoards(boards) {
  const rows = boards.map((b) => {
    const tr = el('tr');
    tr.dataset.board = b.name;
    const link = el('a', null, b.name);
    link.href = '/?board=' + enc(b.name);
    const name = el('td', 'name');
    name.append(link);
    const access = el('td', 'access');
    access.append(el('span', 'chip', b.public_read ? 'public read' : 'private'));
    if (b.player_writes) access.append(' ', el('span', 'chip', 'player writes'));
    const next = el('td', 'next-reset');
    next.append(countdown(b.next_reset_at));
    tr.append(name, el('td', 'members num', fmtCount(b.members)), el('td', 'order', b.order + ' · ' + b.update),
      el('td', 'reset', b.reset === 'never' ? 'never' : b.reset + ' (' + b.timezone + ')'),
      el('td', 'period', b.period), next, access);
    return tr;
  });
  $('boards').tBodies[0].replaceChildren(...rows);
  $('boards-empty').hidden = rows.length > 0;
}

/* ---------- board page: header, controls, URL ---------- */

const isCurrent = () => !!state.board && state.period === state.board.period;

async function openBoard() {
  clearError();
  try {
    const [board, periods] = await Promise.all([
      api(boardPath()),
      api(boardPath() + '/periods').catch(() => ({ periods: [] })),
    ]);
    state.board = board;
    const ids = (periods.periods || []).map((p) => p.id).filter((id) => id !== board.period);
    state.periods = [board.period, ...ids];
    if (!state.periods.includes(state.period)) state.period = board.period;
    renderBoardHead(periods.periods || []);
    connectEvents(false);
    resetRanks();
    loadHistogram();
    await loadView();
  } catch (err) {
    showError(err);
    setLive('offline');
  }
}

function renderBoardHead(periodList) {
  const b = state.board;
  const facts = [
    ['Members', fmtCount(b.members)],
    ['Period', b.period],
    ['Next reset', countdown(b.next_reset_at)],
    ['Order', b.order === 'asc' ? 'asc (lower is better)' : 'desc (higher is better)'],
    ['Update', b.update],
    ['Resets', b.reset === 'never' ? 'never' : b.reset + ', ' + b.timezone + (b.reset === 'weekly' ? ', from ' + b.week_start : '')],
  ];
  if (b.reset !== 'never') facts.push(['Keeps', b.retention + ' periods']);
  $('board-facts').replaceChildren(...facts.map(([k, v]) => {
    const li = el('li');
    li.append(el('span', 'muted', k + ' '), typeof v === 'string' ? el('strong', null, v) : v);
    return li;
  }));
  const members = new Map(periodList.map((p) => [p.id, p.members]));
  $('period').replaceChildren(...state.periods.map((id, i) => {
    const opt = el('option', null, id + (i === 0 ? ' (current)' : '') +
      (members.has(id) ? ' · ' + fmtCount(members.get(id)) + ' members' : ''));
    opt.value = id;
    return opt;
  }));
  $('period').value = state.period;
}

function syncUrl() {
  const q = new URLSearchParams({ board: state.name });
  if (state.ranking !== 'ordinal') q.set('ranking', state.ranking);
  if (!isCurrent()) q.set('period', state.period);
  if (state.offset) q.set('offset', String(state.offset));
  if (state.limit !== 25) q.set('limit', String(state.limit));
  if (state.search) q.set('member', state.search);
  history.replaceState(null, '', '/?' + q.toString());
}

function resetRanks() {
  live.ranks.clear();
  live.marks.clear();
  live.pending.clear();
}

/* ---------- board page: entries and neighbours ---------- */

// Loads the current page (and the neighbours when a search is active) and renders both at once.
async function loadView() {
  const seq = ++state.seq;
  syncUrl();
  const common = { ranking: state.ranking, period: state.period };
  const around = state.search
    ? api(boardPath() + '/members/' + enc(state.search) + '/around', { ...common, before: 5, after: 5 }).catch((err) => ({ err }))
    : Promise.resolve(null);
  try {
    const page = await api(boardPath() + '/entries', { ...common, offset: state.offset, limit: state.limit });
    const near = await around;
    if (seq !== state.seq) return;
    if (!page.entries.length && state.offset > 0 && page.total > 0) {
      state.offset = Math.floor((page.total - 1) / state.limit) * state.limit;
      return loadView();
    }
    clearError();
    renderAround(near);
    renderEntries(page);
    live.pending.clear();
    for (const mark of live.marks.values()) mark.fresh = false;
    markRendered();
  } catch (err) {
    if (seq === state.seq) showError(err);
  }
}

function renderEntries(page) {
  noteMoves(page.entries);
  const rows = page.entries.map((e) => entryRow(e, e.member === state.search));
  $('entries').tBodies[0].replaceChildren(...rows);
  $('entries-empty').hidden = rows.length > 0;
  const first = page.total ? state.offset + 1 : 0;
  const last = state.offset + page.entries.length;
  const info = first + '–' + last + ' of ' + fmtCount(page.total);
  $('page-info').textContent = fmtCount(page.total) + ' members · ' + page.period;
  $('pager-info').textContent = info;
  $('prev').disabled = state.offset === 0;
  $('next').disabled = last >= page.total;
}

function renderAround(near) {
  const panel = $('around-panel');
  if (!near) { panel.hidden = true; return; }
  if (near.err) {
    panel.hidden = true;
    showError(near.err.code === 'member_not_found'
      ? new ApiError(404, 'member_not_found', 'No member "' + state.search + '" in period ' + state.period + '.')
      : near.err);
    return;
  }
  noteMoves(near.entries);
  $('around-member').textContent = state.search;
  $('around').tBodies[0].replaceChildren(...near.entries.map((e) => entryRow(e, e.member === state.search)));
  panel.hidden = false;
}

// Records rank movement of members touched by live events since the last render.
function noteMoves(entries) {
  const now = Date.now();
  for (const e of entries) {
    const prev = live.ranks.get(e.member);
    if (live.pending.has(e.member)) {
      const old = live.marks.get(e.member);
      const delta = prev === undefined ? null : prev - Number(e.rank);
      const keep = delta === 0 && old && old.moveUntil > now; // keep an arrow still showing
      live.marks.set(e.member, {
        changedUntil: now + CHANGED_MS, fresh: true,
        moveUntil: keep ? old.moveUntil : now + MOVE_MS, delta: keep ? old.delta : delta,
      });
      live.pending.delete(e.member);
    }
    live.ranks.set(e.member, Number(e.rank));
  }
}

function entryRow(e, highlight) {
  const tr = el('tr');
  tr.dataset.member = e.member;
  tr.dataset.rank = String(e.rank);
  if (highlight) tr.classList.add('highlight');
  const member = el('td', 'member');
  const pick = el('button', 'link', e.member);
  pick.type = 'button';
  pick.title = 'Show neighbours of ' + e.member;
  pick.addEventListener('click', () => search(e.member));
  member.append(pick);
  const reached = el('td', 'reached');
  const time = el('time', null, fmtTime(e.reached_at));
  time.dateTime = e.reached_at;
  time.title = e.reached_at;
  reached.append(time);
  tr.append(el('td', 'rank num', e.rank), el('td', 'move'), member, el('td', 'score num', e.score), reached, metaCell(e.metadata));
  applyMark(tr, Date.now());
  const mark = live.marks.get(e.member);
  if (mark && mark.fresh) tr.classList.add('flash'); // animates once, on the render after the event
  return tr;
}

function metaCell(meta) {
  const td = el('td', 'meta');
  if (meta === null || meta === undefined) { td.append(el('span', 'muted', '—')); return td; }
  const keys = typeof meta === 'object' && !Array.isArray(meta) ? Object.keys(meta) : [];
  const details = el('details');
  const preview = keys.slice(0, 3).join(', ') + (keys.length > 3 ? ', …' : '');
  details.append(el('summary', null, preview || '{ }'), el('pre', null, JSON.stringify(meta, null, 2)));
  td.append(details);
  return td;
}

// Applies (or clears) the live-update marks of a row: class "changed", the ▲/▼ arrow.
function applyMark(tr, now) {
  const mark = live.marks.get(tr.dataset.member);
  const changed = !!mark && mark.changedUntil > now;
  tr.classList.toggle('changed', changed);
  if (!changed) tr.classList.remove('flash');
  const cell = tr.querySelector('.move');
  const showMove = !!mark && mark.moveUntil > now && mark.delta !== 0;
  if (!showMove) { cell.textContent = ''; cell.className = 'move'; return; }
  if (mark.delta === null) { cell.textContent = 'new'; cell.className = 'move new'; cell.title = 'New on this page'; }
  else if (mark.delta > 0) { cell.textContent = '▲' + mark.delta; cell.className = 'move up'; cell.title = 'Up ' + mark.delta; }
  else { cell.textContent = '▼' + -mark.delta; cell.className = 'move down'; cell.title = 'Down ' + -mark.delta; }
}

// Once a second: expire marks and refresh countdowns.
function sweep() {
  const now = Date.now();
  for (const [member, mark] of live.marks) if (mark.changedUntil <= now && mark.moveUntil <= now) live.marks.delete(member);
  for (const tr of document.querySelectorAll('table.ranking tr[data-member]')) applyMark(tr, now);
  for (const t of document.querySelectorAll('time.countdown')) t.textContent = fromNow(t.dateTime);
}

function search(member) {
  state.search = member || null;
  $('search-member').value = member || '';
  clearError();
  loadView();
}

/* ---------- histogram ---------- */

async function loadHistogram() {
  const seq = ++state.histSeq;
  live.histAt = Date.now();
  try {
    const page = await api(boardPath() + '/entries', { period: state.period, limit: HISTOGRAM_SAMPLE });
    if (seq === state.histSeq) drawHistogram(page.entries.map((e) => Number(e.score)), page.total);
  } catch (_) { /* the entries table reports errors */ }
}

// A histogram refresh at most every HISTOGRAM_EVERY_MS while events keep coming.
function scheduleHistogram() {
  if (live.histTimer) return;
  const wait = Math.max(0, live.histAt + HISTOGRAM_EVERY_MS - Date.now());
  live.histTimer = setTimeout(() => { live.histTimer = null; loadHistogram(); }, wait);
}

function drawHistogram(values, total) {
  const svg = $('histogram');
  const NS = 'http://www.w3.org/2000/svg';
  const W = 320, H = 120;
  svg.replaceChildren();
  $('hist-caption').textContent = values.length < total
    ? 'top ' + fmtCount(values.length) + ' of ' + fmtCount(total) : fmtCount(total) + ' members';
  if (!values.length) { $('hist-min').textContent = 'no entries'; $('hist-max').textContent = ''; return; }
  const min = Math.min(...values), max = Math.max(...values);
  const bins = max === min ? 1 : Math.min(24, Math.max(1, Math.ceil(Math.sqrt(values.length)) + 2));
  const width = (max - min) / bins || 1;
  const counts = new Array(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.floor((v - min) / width))]++;
  const top = Math.max(...counts);
  counts.forEach((count, i) => {
    const h = count ? Math.max(2, (count / top) * (H - 4)) : 0;
    const rect = document.createElementNS(NS, 'rect');
    rect.setAttribute('x', String((i * W) / bins + 1));
    rect.setAttribute('y', String(H - h));
    rect.setAttribute('width', String(Math.max(1, W / bins - 2)));
    rect.setAttribute('height', String(h));
    const title = document.createElementNS(NS, 'title');
    const lo = Math.round(min + i * width), hi = Math.round(min + (i + 1) * width);
    title.textContent = (bins === 1 ? String(min) : lo + ' – ' + hi) + ': ' + count + ' members';
    rect.append(title);
    svg.append(rect);
  });
  svg.setAttribute('aria-label', 'Score distribution of ' + values.length + ' scores from ' + min + ' to ' + max);
  $('hist-min').textContent = String(min);
  $('hist-max').textContent = String(max);
}

/* ---------- live updates ---------- */

function setLive(word) {
  const node = $('live');
  node.textContent = word;
  node.dataset.state = word;
}

function connectEvents(isRetry) {
  closeEvents();
  const token = credential();
  const url = boardPath() + '/events' + (token ? '?access_token=' + enc(token) : '');
  const es = new EventSource(url);
  live.source = es;
  setLive(isRetry ? 'reconnecting' : 'connecting');
  es.addEventListener('open', () => {
    if (live.source !== es) return;
    setLive(isCurrent() ? 'live' : 'paused');
    if (isRetry) scheduleReload(); // a new stream does not replay what was missed
  });
  es.addEventListener('error', () => {
    if (live.source !== es) return;
    if (es.readyState === EventSource.CLOSED) { // refused (401/404…): the browser gives up, we retry
      setLive('offline');
      live.retry = setTimeout(() => connectEvents(true), 5000);
    } else {
      setLive('reconnecting');
    }
  });
  const on = (type, fn) => es.addEventListener(type, (ev) => {
    if (live.source !== es) return;
    let data = {};
    try { data = parseJson(ev.data || '{}'); } catch (_) { /* keep {} */ }
    fn(data);
  });
  on('score', onScore);
  on('remove', onRemove);
  on('reset', onReset);
  on('resync', () => { pushFeed('resync', 'missed events — reloading'); scheduleReload(); scheduleHistogram(); });
}

function closeEvents() {
  clearTimeout(live.retry);
  if (live.source) live.source.close();
  live.source = null;
}

function onScore(d) {
  pushFeed('score', d.member + ' → ' + d.score + ' (#' + d.rank + ')');
  if (!isCurrent() || d.period !== state.period) return;
  live.pending.add(d.member);
  scheduleReload();
  scheduleHistogram();
}

function onRemove(d) {
  pushFeed('remove', d.member + ' removed');
  if (!isCurrent() || d.period !== state.period) return;
  scheduleReload();
  scheduleHistogram();
}

async function onReset(d) {
  pushFeed('reset', 'new period ' + d.period + (d.previous ? ' (was ' + d.previous + ')' : ''));
  const wasCurrent = isCurrent();
  try {
    const [board, periods] = await Promise.all([api(boardPath()), api(boardPath() + '/periods').catch(() => ({ periods: [] }))]);
    state.board = board;
    state.periods = [board.period, ...(periods.periods || []).map((p) => p.id).filter((id) => id !== board.period)];
    if (wasCurrent || !state.periods.includes(state.period)) { state.period = board.period; state.offset = 0; resetRanks(); }
    renderBoardHead(periods.periods || []);
    setLive(isCurrent() ? 'live' : 'paused');
    loadHistogram();
    await loadView();
  } catch (err) {
    showError(err);
  }
}

// Debounced reload of the visible tables; never more than one in flight.
function scheduleReload() {
  if (live.reloadTimer) return;
  live.reloadTimer = setTimeout(async () => {
    live.reloadTimer = null;
    if (live.busy) { live.again = true; return; }
    live.busy = true;
    try { await loadView(); } finally {
      live.busy = false;
      if (live.again) { live.again = false; scheduleReload(); }
    }
  }, RELOAD_DELAY_MS);
}

function pushFeed(kind, text) {
  live.feed.unshift({ kind, text, at: new Date() });
  live.feed.length = Math.min(live.feed.length, FEED_MAX);
  const items = live.feed.map((f) => {
    const li = el('li', 'feed-' + f.kind);
    li.append(el('time', 'muted', pad(f.at.getHours()) + ':' + pad(f.at.getMinutes()) + ':' + pad(f.at.getSeconds())), ' ', el('span', null, f.text));
    return li;
  });
  $('feed').replaceChildren(...items);
  $('feed-empty').hidden = true;
}

/* ---------- wiring ---------- */

function bindBoardControls() {
  $('ranking').addEventListener('change', () => {
    state.ranking = $('ranking').value;
    resetRanks();
    loadView();
  });
  $('period').addEventListener('change', () => {
    state.period = $('period').value;
    state.offset = 0;
    resetRanks();
    if (live.source && live.source.readyState === EventSource.OPEN) setLive(isCurrent() ? 'live' : 'paused');
    loadHistogram();
    loadView();
  });
  $('limit').addEventListener('change', () => {
    state.limit = Number($('limit').value);
    state.offset = Math.floor(state.offset / state.limit) * state.limit;
    loadView();
  });
  $('prev').addEventListener('click', () => { state.offset = Math.max(0, state.offset - state.limit); loadView(); });
  $('next').addEventListener('click', () => { state.offset += state.limit; loadView(); });
  $('search').addEventListener('submit', (ev) => {
    ev.preventDefault();
    search($('search-member').value.trim());
  });
  $('around-close').addEventListener('click', () => { search(null); $('search-member').focus(); });
  document.addEventListener('keydown', (ev) => {
    const typing = /^(INPUT|SELECT|TEXTAREA)$/.test(ev.target.tagName);
    if (ev.key === '/' && !typing && !ev.ctrlKey && !ev.metaKey && !ev.altKey) { ev.preventDefault(); $('search-member').focus(); }
  });
}

function bindCredential(restart) {
  $('credential').value = credential();
  $('auth').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const token = $('credential').value.trim();
    if (token) sessionStorage.setItem(CRED_KEY, token); else sessionStorage.removeItem(CRED_KEY);
    restart();
  });
  $('credential-clear').addEventListener('click', () => {
    sessionStorage.removeItem(CRED_KEY);
    $('credential').value = '';
    restart();
  });
}

function readUrlState(params) {
  const ranking = params.get('ranking');
  if (['ordinal', 'competition', 'dense'].includes(ranking)) state.ranking = ranking;
  state.period = params.get('period');
  state.offset = Math.max(0, parseInt(params.get('offset'), 10) || 0);
  const limit = parseInt(params.get('limit'), 10);
  if ([25, 50, 100].includes(limit)) state.limit = limit;
  state.search = params.get('member') || null;
  $('ranking').value = state.ranking;
  $('limit').value = String(state.limit);
  $('search-member').value = state.search || '';
}

function main() {
  const params = new URLSearchParams(location.search);
  const name = params.get('board');
  setInterval(sweep, 1000);
  if (!name) {
    $('boards-view').hidden = false;
    bindCredential(() => { clearError(); loadBoards(); });
    $('boards-refresh').addEventListener('click', loadBoards);
    setInterval(loadBoards, 30000);
    loadBoards();
    return;
  }
  state.name = name;
  document.title = name + ' · Photofinish';
  $('board-name').textContent = name;
  $('crumb-board-name').textContent = name;
  $('crumb-board').hidden = false;
  $('live').hidden = false;
  $('board-view').hidden = false;
  readUrlState(params);
  bindBoardControls();
  bindCredential(openBoard);
  openBoard();
}

document.addEventListener('DOMContentLoaded', main);
