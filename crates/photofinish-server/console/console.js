/*
 * Photofinish web console (served at /console.js; no libraries, no build step).
 *
 * "/"              lists the boards the caller may read (GET /v1/boards), a page of
 *                  BOARDS_PAGE at a time (?offset= in the URL keeps the page).
 * "/?board=NAME"   shows one board: a page of entries (rank style, period, paging), a member
 *                  search showing that member's neighbours (/around), a histogram of the top
 *                  1000 scores, and live updates from the board's event stream (SSE). On a
 *                  board with cohort_size (docs/SPEC.md §14): the period's cohorts, and a
 *                  cohort's standings — the searched member's cohort (its tier and cohort
 *                  named), or the one picked from the list. For an admin of the board
 *                  (docs/SPEC.md §15): the board's hidden members, each with "Unhide", and
 *                  "Hide" on every member's row; a hidden member found by a search is
 *                  shown marked "hidden" with the rank it would have. On a board with reward
 *                  rows (docs/SPEC.md §16): the period's grants, once its close made them;
 *                  and for a searched member, its rewards on every board the caller reads.
 *                  On a board of partitions (§17): the period's partitions, each picking
 *                  that partition's standings (?partition= in the URL); on a board of
 *                  teams: the top teams, each picking its members' contributions
 *                  (?team=); every row names its member's partition and team.
 *
 * Auth: the credential (API key or player token) is kept in sessionStorage under
 * "photofinish.credential" and sent as "Authorization: Bearer <token>". EventSource cannot
 * set headers, so the events URL carries "?access_token=<token>" instead.
 *
 * Scores are i64 and may exceed 2^53: responses are parsed so that such scores stay exact
 * decimal strings (see parseJson); only the histogram converts them to (inexact) numbers.
 *
 * Test hooks: body.dataset.ready = "1" after the first successful table render, and
 * body.dataset.renders counts renders (one per reload of #entries/#around, or of #boards).
 */
'use strict';

const CRED_KEY = 'photofinish.credential';
const RELOAD_DELAY_MS = 150;     // debounce of reloads triggered by live events
const CHANGED_MS = 5000;         // how long a row touched by an event keeps class "changed"
const MOVE_MS = 30000;           // how long an overtake arrow (▲n / ▼n) stays on a row
const HISTOGRAM_EVERY_MS = 5000; // at most one histogram refresh per this interval
const HISTOGRAM_SAMPLE = 1000;   // top entries sampled for the histogram
const FEED_MAX = 20;
const BOARDS_PAGE = 100;         // boards a page of the list shows (the server's default)

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
  cohort: null,      // cohort picked from the list (when no member is searched): {tier, cohort}
  partition: null,   // the partition whose standings the page and neighbours show
  team: null,        // the team whose members are shown (docs/SPEC.md §17)
  admin: false,      // the credential may moderate this board (its hidden list answered)
  seq: 0,            // drops answers to superseded requests
  histSeq: 0,
  boardsOffset: 0,   // the boards list's page
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

// JSON.parse keeping scores beyond 2^53 exact, as decimal strings: "score", and each
// column's value inside "scores" (a board of several columns).
function parseJson(text) {
  if (HAS_SOURCE) {
    return JSON.parse(text, (key, value, ctx) =>
      typeof value === 'number' && !Number.isSafeInteger(value) && ctx && /^-?\d+$/.test(ctx.source) ? ctx.source : value);
  }
  // Fallback: quote long integer literals after a "score" key, and inside a "scores"
  // object, before parsing. (Inside JSON strings quotes are escaped, so this cannot match
  // text within a member name; column names are [a-z0-9_].)
  return JSON.parse(text
    .replace(/("score"\s*:\s*)(-?\d{16,})/g, '$1"$2"')
    .replace(/("scores"\s*:\s*\{)([^{}]*)(\})/g, (m, a, body, c) => a + body.replace(/(:\s*)(-?\d{16,})/g, '$1"$2"') + c));
}

// The board's column names when it ranks by several (docs/SPEC.md §13), else [].
const columnNames = () => (state.board && state.board.columns && state.board.columns.length > 1
  ? state.board.columns.map((c) => c.name) : []);

// A page's score headers: "Score", or one per column of the board.
function renderScoreHeads() {
  const names = columnNames();
  for (const id of ['entries', 'around', 'cohort']) {
    const row = $(id).tHead.rows[0];
    for (const th of [...row.querySelectorAll('th.col')]) th.remove();
    const score = row.querySelector('th.score-head');
    score.hidden = names.length > 0;
    for (const n of names.slice().reverse()) score.after(el('th', 'num col', n, { scope: 'col' }));
  }
  // The chart shows the first column's values (what `score` is on such a board).
  $('hist-title').textContent = names.length ? names[0] + ' distribution' : 'Score distribution';
}

// An entry's score cells: its score, or each column's value.
function scoreCells(e) {
  const names = columnNames();
  if (!names.length || !e.scores) return [el('td', 'score num', e.score)];
  return names.map((n) => el('td', 'score num', e.scores[n]));
}

async function api(path, params, method) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const headers = { Accept: 'application/json' };
  if (credential()) headers.Authorization = 'Bearer ' + credential();
  let res;
  try {
    res = await fetch(path + (q.toString() ? '?' + q : ''), { method: method || 'GET', headers, cache: 'no-store' });
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

/* ---------- small helpers ---------- */

// Creates an element; text goes in as textContent (never parsed as HTML).
function el(tag, className, text, props) {
  const node = Object.assign(document.createElement(tag), props);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

const fmtCount = (n) => Number(n).toLocaleString('en-US');
const pad = (n) => String(n).padStart(2, '0');
const clock = (d) => pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());

function fmtTime(iso) {
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + clock(d);
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
  return el('time', 'countdown', fromNow(iso), { dateTime: iso, title: fmtTime(iso) + ' (local time)' });
}

function markRendered() {
  const body = document.body;
  body.dataset.renders = String(Number(body.dataset.renders || 0) + 1);
  body.dataset.ready = '1';
}

function showError(err) {
  const hint = err.status === 401 ? ' Enter an API key or player token in the Credential field above.'
    : err.status === 403 ? ' This credential may not read this board.' : '';
  const text = el('span', 'banner-text');
  text.append(el('strong', null, err.code || 'error'), ' ' + err.message + hint);
  const close = el('button', 'quiet', 'Dismiss', { type: 'button' });
  close.addEventListener('click', clearError);
  $('error').replaceChildren(text, close);
  $('error').hidden = false;
}

function clearError() {
  $('error').hidden = true;
  $('error').replaceChildren();
}

/* ---------- boards list ---------- */

async function loadBoards() {
  try {
    // The audit log answers admins only; anyone else's console shows none of it.
    const audit = api('/v1/audit', { limit: 50 }).catch(() => null);
    const list = await api('/v1/boards', { offset: state.boardsOffset, limit: BOARDS_PAGE });
    renderBoards(list.boards || [], list.total || 0);
    renderAudit(await audit);
    clearError();
    markRendered();
  } catch (err) {
    showError(err);
  }
}

function renderBoards(boards, total) {
  const rows = boards.map((b) => {
    const tr = el('tr');
    tr.dataset.board = b.name;
    const cells = {
      name: el('a', null, b.name, { href: '/?board=' + enc(b.name) }),
      'members num': fmtCount(b.members),
      order: (b.columns && b.columns.length > 1
        ? b.columns.map((c) => c.name + (c.order === 'asc' ? ' ↑' : ' ↓')).join(' · ')
        : b.order) + ' · ' + b.update,
      reset: b.reset === 'never' ? 'never' : b.reset + ' (' + b.timezone + ')',
      period: b.period,
      'next-reset': countdown(b.next_reset_at),
      access: el('span', 'chip', b.public_read ? 'public read' : 'private'),
    };
    for (const [cls, v] of Object.entries(cells)) {
      const td = el('td', cls, typeof v === 'string' ? v : null);
      if (typeof v !== 'string') td.append(v);
      tr.append(td);
    }
    if (b.player_writes) tr.lastChild.append(' ', el('span', 'chip', 'player writes'));
    return tr;
  });
  $('boards').tBodies[0].replaceChildren(...rows);
  $('boards-empty').hidden = rows.length > 0;
  const last = state.boardsOffset + rows.length;
  $('boards-info').textContent = (rows.length ? state.boardsOffset + 1 : 0) + '–' + last + ' of ' + fmtCount(total) + ' boards';
  $('boards-prev').disabled = state.boardsOffset === 0;
  $('boards-next').disabled = last >= total;
}

function pageBoards(offset) {
  state.boardsOffset = Math.max(0, offset);
  const url = new URL(location.href);
  if (state.boardsOffset) url.searchParams.set('offset', String(state.boardsOffset)); else url.searchParams.delete('offset');
  history.replaceState(null, '', url);
  loadBoards();
}

// The audit log's newest entries (docs/SPEC.md §15), for an admin.
function renderAudit(log) {
  $('audit-card').hidden = !log;
  if (!log) return;
  $('audit-caption').textContent = 'newest ' + fmtCount(log.entries.length);
  $('audit-empty').hidden = log.entries.length > 0;
  $('audit').tBodies[0].replaceChildren(...log.entries.map((e) => {
    const tr = el('tr');
    const when = el('td', 'when');
    when.append(el('time', null, fmtTime(e.at), { dateTime: e.at, title: e.at }));
    const detail = JSON.stringify(e.detail);
    tr.append(when, el('td', 'actor', e.actor), el('td', 'action', e.action), el('td', 'board', e.board),
      el('td', 'member', e.member || '—'), el('td', 'detail', detail === '{}' ? '' : detail));
    return tr;
  }));
}

/* ---------- board page: header, controls, URL ---------- */

const isCurrent = () => !!state.board && state.period === state.board.period;

// Fetches the board and its retained periods; the picker lists the current period first.
async function fetchBoard() {
  const [board, periods] = await Promise.all([
    api(boardPath()),
    api(boardPath() + '/periods').catch(() => ({ periods: [] })),
  ]);
  const list = periods.periods || [];
  state.board = board;
  state.periods = [board.period, ...list.map((p) => p.id).filter((id) => id !== board.period)];
  return list;
}

async function openBoard() {
  clearError();
  try {
    const list = await fetchBoard();
    if (!state.periods.includes(state.period)) state.period = state.board.period;
    renderBoardHead(list);
    renderScoreHeads();
    $('board-body').hidden = false;
    connectEvents(false);
    resetRanks();
    loadHistogram();
    await loadView();
  } catch (err) {
    showError(err);
    if (!live.source) setLive('offline');
  }
}

// The board's facts and the period picker; `periodList` gives each period's member count.
function renderBoardHead(periodList) {
  state.periodMembers = new Map(periodList.map((p) => [p.id, p.members]));
  renderHeadCounts();
}

// Renders the facts and the picker from state.board and state.periodMembers.
function renderHeadCounts() {
  const b = state.board;
  const facts = [
    ['Members', fmtCount(b.members)],
    ['Period', b.period],
    ['Next reset', countdown(b.next_reset_at)],
    b.columns && b.columns.length > 1
      ? ['Ranks by', b.columns.map((c) => c.name + (c.order === 'asc' ? ' (lower is better)' : ' (higher is better)')).join(', then ')]
      : ['Order', b.order === 'asc' ? 'asc (lower is better)' : 'desc (higher is better)'],
    ['Update', b.update],
    ['Resets', b.reset === 'never' ? 'never' : b.reset + ', ' + b.timezone + (b.reset === 'weekly' ? ', from ' + b.week_start : '')],
  ];
  if (b.reset !== 'never') facts.push(['Keeps', b.retention + ' periods']);
  if (b.cohort_size) facts.push(['Cohorts', 'of ' + fmtCount(b.cohort_size)]);
  if (b.partitions) facts.push(['Partitions', 'up to ' + fmtCount(b.partitions.max)]);
  if (b.teams) facts.push(['Teams', 'of up to ' + fmtCount(b.teams.max_size)]);
  if (b.league) {
    facts.push(['League', b.league.tiers.join(' → ') + ' · top ' + b.league.promote + ' up, last '
      + b.league.demote + ' down']);
  }
  if (b.rewards) {
    const ranks = (r) => r.top_percent !== undefined ? 'top ' + r.top_percent + '%'
      : (r.from === r.to ? '#' + r.from : '#' + r.from + '–' + r.to);
    facts.push(['Rewards', b.rewards.map((r) => (r.tier ? r.tier + ' ' : '') + ranks(r) + ' ' + r.reward
      + (r.amount > 1 ? ' × ' + r.amount : '')).join(', ')]);
  }
  $('board-facts').replaceChildren(...facts.map(([k, v]) => {
    const li = el('li');
    li.append(el('span', 'muted', k + ' '), typeof v === 'string' ? el('strong', null, v) : v);
    return li;
  }));
  const members = state.periodMembers;
  $('period').replaceChildren(...state.periods.map((id, i) => el('option', null,
    id + (i === 0 ? ' (current)' : '') + (members.has(id) ? ' · ' + fmtCount(members.get(id)) + ' members' : ''), { value: id })));
  $('period').value = state.period;
}

function syncUrl() {
  const q = new URLSearchParams({ board: state.name });
  if (state.ranking !== 'ordinal') q.set('ranking', state.ranking);
  if (!isCurrent()) q.set('period', state.period);
  if (state.offset) q.set('offset', String(state.offset));
  if (state.limit !== 25) q.set('limit', String(state.limit));
  if (state.search) q.set('member', state.search);
  if (state.partition) q.set('partition', state.partition);
  if (state.team) q.set('team', state.team);
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
  const inPart = { ...common, partition: state.partition };
  const around = state.search
    ? api(boardPath() + '/members/' + enc(state.search) + '/around', { ...inPart, before: 5, after: 5 }).catch((err) => ({ err }))
    : Promise.resolve(null);
  // The hidden list answers admins only: it is also how the console learns it may moderate.
  const hidden = api(boardPath() + '/hidden', { limit: 100 }).catch(() => null);
  const audit = api('/v1/audit', { board: state.name, limit: 10 }).catch(() => null);
  const rewards = state.board && state.board.rewards
    ? api(boardPath() + '/periods/' + enc(state.period) + '/rewards', { limit: 100 }).catch(() => null)
    : Promise.resolve(null);
  const memberRewards = state.search
    ? api('/v1/members/' + enc(state.search) + '/rewards', { limit: 20 }).catch(() => null)
    : Promise.resolve(null);
  try {
    const cohorts = loadCohorts(common);
    const teams = loadGroups(common);
    const page = await api(boardPath() + '/entries', { ...inPart, offset: state.offset, limit: state.limit });
    const near = await around;
    const groups = await cohorts;
    const parted = await teams;
    const hiddenList = await hidden;
    const changes = await audit;
    const grants = await rewards;
    const owned = await memberRewards;
    if (seq !== state.seq) return;
    state.admin = !!hiddenList;
    renderHidden(hiddenList);
    renderBoardAudit(changes);
    renderRewards(grants);
    renderMemberRewards(owned);
    if (!page.entries.length && state.offset > 0 && page.total > 0) { // paged past the end
      state.offset = Math.floor((page.total - 1) / state.limit) * state.limit;
      return loadView();
    }
    clearError();
    renderAround(near);
    renderCohorts(groups);
    renderGroups(parted);
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
  // A live write may have added (or a remove taken away) a member: the header and the
  // picker count what the page just counted, for the period it shows.
  // A partition's page counts the partition alone: the board's counts stay.
  const boardPeriod = !!state.board && page.period === state.board.period && !state.partition;
  const counted = state.periodMembers && !state.partition ? state.periodMembers.get(page.period) : undefined;
  if ((boardPeriod && page.total !== state.board.members) || (counted !== undefined && counted !== page.total)) {
    if (boardPeriod) state.board.members = page.total;
    if (state.periodMembers) state.periodMembers.set(page.period, page.total);
    renderHeadCounts();
  }
  const rows = page.entries.map((e) => entryRow(e, e.member === state.search));
  $('entries').tBodies[0].replaceChildren(...rows);
  $('entries-empty').hidden = rows.length > 0;
  const last = state.offset + rows.length;
  $('page-info').textContent = fmtCount(page.total) + ' members · ' + page.period
    + (state.partition ? ' · partition ' + state.partition : '');
  $('pager-info').textContent = (page.total ? state.offset + 1 : 0) + '–' + last + ' of ' + fmtCount(page.total);
  $('prev').disabled = state.offset === 0;
  $('next').disabled = last >= page.total;
}

function renderAround(near) {
  $('around-panel').hidden = !near || !!near.err;
  if (!near) return;
  if (near.err) {
    if (near.err.code !== 'member_not_found') return showError(near.err);
    showError(new ApiError(404, 'member_not_found', 'No member "' + state.search + '" in period ' + state.period + '.'));
    state.search = null; // live reloads should not repeat the message
    return syncUrl();
  }
  noteMoves(near.entries);
  $('around-member').textContent = state.search;
  $('around').tBodies[0].replaceChildren(...near.entries.map((e) => entryRow(e, e.member === state.search)));
}

/* ---------- rewards (docs/SPEC.md §16) ---------- */

// A grant's state now, by this browser's clock: claimed, expired or unclaimed.
function grantStatus(g) {
  if (g.claimed_at) return 'claimed';
  return Date.parse(g.expires_at) <= Date.now() ? 'expired' : 'unclaimed';
}

// One grant as a list row: `who` (the member, or its board and period) and what it pays.
function grantRow(g, who) {
  const li = el('li');
  li.dataset.grant = g.id;
  const status = grantStatus(g);
  const title = g.id + ' · granted ' + g.granted_at + ' · expires ' + g.expires_at
    + (g.claimed_at ? ' · claimed ' + g.claimed_at + ' by ' + g.claimed_by : '');
  li.title = title;
  const pays = el('span', 'pays', g.reward + (g.amount > 1 ? ' × ' + fmtCount(g.amount) : ''));
  li.append(who, pays, el('span', 'status ' + status, status));
  return li;
}

// The selected period's grants, on a board with reward rows.
function renderRewards(r) {
  $('rewards-card').hidden = !r;
  if (!r) return;
  $('rewards-caption').textContent = r.granted
    ? fmtCount(r.total) + (r.total === 1 ? ' grant' : ' grants') + ' · ' + r.period + (r.cut ? ' · ' + fmtCount(r.cut) + ' cut' : '')
    : r.period;
  $('rewards-empty').hidden = r.grants.length > 0;
  $('rewards-empty').textContent = r.granted
    ? 'Nobody qualified when this period closed.'
    : 'Granted when this period closes' + (state.board.grace ? ' (after ' + state.board.grace + ' s of grace)' : '') + '.';
  $('rewards').replaceChildren(...r.grants.map((g) => {
    const who = el('span', 'who');
    const pick = el('button', 'link', g.member, { type: 'button', title: 'Show neighbours and rewards of ' + g.member });
    pick.addEventListener('click', () => search(g.member));
    who.append(el('span', 'muted', '#' + g.rank + ' '), pick);
    return grantRow(g, who);
  }));
}

// The searched member's rewards on every board the caller may read, newest first.
function renderMemberRewards(m) {
  $('member-rewards-card').hidden = !m;
  if (!m) return;
  $('member-rewards-member').textContent = m.member;
  $('member-rewards-caption').textContent = fmtCount(m.total) + (m.total === 1 ? ' grant' : ' grants');
  $('member-rewards-empty').hidden = m.grants.length > 0;
  $('member-rewards').replaceChildren(...m.grants.map((g) =>
    grantRow(g, el('span', 'who', g.board + ' · ' + g.period + ' · #' + g.rank))));
}

/* ---------- moderation (docs/SPEC.md §15; admins of the board) ---------- */

function renderHidden(list) {
  $('hidden-card').hidden = !list;
  if (!list) return;
  $('hidden-caption').textContent = fmtCount(list.total) + ' of at most 10,000';
  $('hidden-empty').hidden = list.members.length > 0;
  $('hidden-list').replaceChildren(...list.members.map((m) => {
    const li = el('li');
    const pick = el('button', 'link', m, { type: 'button', title: 'Show ' + m + ' as it would rank' });
    pick.addEventListener('click', () => search(m));
    li.append(pick, modButton(m, false));
    return li;
  }));
}

// The board's latest admin changes (the audit log, docs/SPEC.md §15), for an admin.
function renderBoardAudit(log) {
  $('board-audit-card').hidden = !log;
  if (!log) return;
  $('board-audit-empty').hidden = log.entries.length > 0;
  $('board-audit').replaceChildren(...log.entries.map((e) => {
    const li = el('li');
    li.append(el('time', 'muted', fmtTime(e.at), { dateTime: e.at, title: e.at }), ' ',
      el('span', null, e.actor + ' · ' + e.action + (e.member ? ' ' + e.member : '')));
    return li;
  }));
}

// "Hide" (or "Unhide") for `member`: hides it on the board, then reloads what is shown.
function modButton(member, hide) {
  const b = el('button', 'quiet mod', hide ? 'Hide' : 'Unhide', {
    type: 'button',
    title: hide ? 'Hide ' + member + ' from everyone else (it keeps its entries and sees itself)' : 'Show ' + member + ' again',
  });
  b.dataset.moderate = hide ? 'hide' : 'unhide';
  b.addEventListener('click', async (ev) => {
    ev.stopPropagation();
    b.disabled = true;
    try {
      await api(boardPath() + '/members/' + enc(member) + '/' + (hide ? 'hide' : 'unhide'), null, 'POST');
      loadView();
    } catch (err) {
      b.disabled = false;
      showError(err);
    }
  });
  return b;
}

/* ---------- cohorts (a board with cohort_size) ---------- */

const hasCohorts = () => !!(state.board && state.board.cohort_size);

// The period's cohorts, and the cohort to show: the searched member's, else the one picked.
async function loadCohorts(common) {
  if (!hasCohorts()) return null;
  const list = api(boardPath() + '/cohorts', { period: common.period, limit: 100 });
  let shown = null;
  let tier = null;
  if (state.search) {
    shown = api(boardPath() + '/members/' + enc(state.search) + '/cohort', common).catch(() => null);
    // On a league board: the member's tier now (a close may have moved it since).
    if (state.board.league) tier = api(boardPath() + '/members/' + enc(state.search) + '/tier').catch(() => null);
  } else if (state.cohort) {
    const q = { ...common, limit: 100 };
    if (state.cohort.tier) q.tier = state.cohort.tier;
    shown = api(boardPath() + '/cohorts/' + state.cohort.cohort + '/entries', q).catch(() => null);
  }
  return { list: await list, shown: await shown, tier: await tier };
}

function renderCohorts(groups) {
  $('cohorts-card').hidden = !groups;
  $('cohort-panel').hidden = !groups || !groups.shown;
  if (!groups) return;
  const list = groups.list.cohorts;
  const n = groups.list.total;
  $('cohorts-caption').textContent = fmtCount(n) + (n === 1 ? ' cohort' : ' cohorts') + ' of ' + fmtCount(state.board.cohort_size);
  $('cohorts-empty').hidden = list.length > 0;
  $('cohorts').replaceChildren(...list.map((c) => {
    const shownHere = groups.shown && groups.shown.cohort === c.cohort && groups.shown.tier === c.tier;
    const li = el('li', shownHere ? 'current' : '');
    const pick = el('button', 'link', (c.tier ? c.tier + ' · ' : '') + 'Cohort ' + c.cohort,
      { type: 'button', title: 'Show cohort ' + c.cohort + "'s standings" });
    pick.addEventListener('click', () => { state.cohort = { tier: c.tier, cohort: c.cohort }; search(null); });
    li.append(pick, el('span', 'muted', fmtCount(c.members) + ' / ' + state.board.cohort_size));
    return li;
  }));
  const c = groups.shown;
  if (!c) return;
  $('cohort-title').textContent = (c.tier ? c.tier + ' · ' : '') + 'Cohort ' + c.cohort
    + (state.search ? ' of ' + state.search : '');
  $('cohort-info').textContent = fmtCount(c.total) + ' played · ' + c.period
    + (groups.tier ? ' · ' + groups.tier.member + "'s tier now: " + groups.tier.tier : '');
  const rows = c.entries.map((e) => entryRow(e, e.member === state.search));
  $('cohort').tBodies[0].replaceChildren(...rows);
  $('cohort-empty').hidden = rows.length > 0;
}

/* ---------- partitions and teams (docs/SPEC.md §17) ---------- */

// The period's partitions, its top teams, and the team picked with its members.
async function loadGroups(common) {
  const b = state.board;
  if (!b || (!b.partitions && !b.teams)) return null;
  const parts = b.partitions ? api(boardPath() + '/partitions', { period: common.period, limit: 100 }) : null;
  const teams = b.teams ? api(boardPath() + '/teams', { ...common, limit: 10 }) : null;
  const team = b.teams && state.team
    ? api(boardPath() + '/teams/' + enc(state.team), { ...common, limit: 100 }).catch(() => null)
    : null;
  return { parts: await parts, teams: await teams, team: await team };
}

function pickPartition(partition) {
  state.partition = partition;
  state.offset = 0;
  resetRanks();
  loadView();
}

function renderGroups(g) {
  $('partitions-card').hidden = !g || !g.parts;
  $('teams-card').hidden = !g || !g.teams;
  $('team-panel').hidden = !g || !g.team;
  if (!g) return;
  if (g.parts) {
    const n = g.parts.total;
    $('partitions-caption').textContent = fmtCount(n) + (n === 1 ? ' partition' : ' partitions');
    $('partitions-empty').hidden = g.parts.partitions.length > 0;
    $('partition-all').hidden = !state.partition;
    $('partitions').replaceChildren(...g.parts.partitions.map((p) => {
      const li = el('li', p.partition === state.partition ? 'current' : '');
      const pick = el('button', 'link', p.partition, { type: 'button', title: "Show partition " + p.partition + "'s standings" });
      pick.addEventListener('click', () => pickPartition(p.partition));
      li.append(pick, el('span', 'muted', fmtCount(p.members) + (p.members === 1 ? ' member' : ' members')));
      return li;
    }));
  }
  if (g.teams) {
    const n = g.teams.total;
    $('teams-caption').textContent = fmtCount(n) + (n === 1 ? ' team' : ' teams') + ' · top 10';
    $('teams-empty').hidden = g.teams.entries.length > 0;
    $('teams').replaceChildren(...g.teams.entries.map((t) => {
      const li = el('li', t.team === state.team ? 'current' : '');
      const pick = el('button', 'link', '#' + t.rank + ' ' + t.team, { type: 'button', title: 'Show ' + t.team + "'s members" });
      pick.addEventListener('click', () => { state.team = t.team; loadView(); });
      li.append(pick, el('span', 'muted', t.score + ' · ' + fmtCount(t.members) + (t.members === 1 ? ' member' : ' members')));
      return li;
    }));
  }
  const t = g.team;
  if (!t) return;
  $('team-title').textContent = 'Team ' + t.team;
  $('team-info').textContent = '#' + t.rank + ' · ' + t.score + ' · ' + fmtCount(t.members)
    + (t.members === 1 ? ' member' : ' members') + ' · since ' + fmtTime(t.reached_at);
  const rows = t.entries.map((e) => entryRow(e, e.member === state.search));
  $('team').tBodies[0].replaceChildren(...rows);
}

// Records the rank movement of members touched by live events since the last render.
function noteMoves(entries) {
  const now = Date.now();
  for (const e of entries) {
    const prev = live.ranks.get(e.member);
    if (live.pending.delete(e.member)) {
      const old = live.marks.get(e.member);
      const delta = prev === undefined ? null : prev - Number(e.rank);
      const keep = delta === 0 && old && old.moveUntil > now; // an arrow still showing stays
      live.marks.set(e.member, {
        changedUntil: now + CHANGED_MS, fresh: true,
        moveUntil: keep ? old.moveUntil : now + MOVE_MS, delta: keep ? old.delta : delta,
      });
    }
    live.ranks.set(e.member, Number(e.rank));
  }
}

function entryRow(e, highlight) {
  const tr = el('tr', highlight ? 'highlight' : '');
  tr.dataset.member = e.member;
  tr.dataset.rank = String(e.rank);
  const pick = el('button', 'link', e.member, { type: 'button', title: 'Show neighbours of ' + e.member });
  pick.addEventListener('click', () => search(e.member));
  const member = el('td', 'member');
  member.append(pick);
  if (e.hidden) {
    tr.classList.add('hidden-member');
    member.append(el('span', 'chip hidden-chip', 'hidden', { title: 'Hidden: only admins and the member itself see it; the rank is the one it would have' }));
  }
  for (const [what, key] of [['partition', e.partition], ['team', e.team]]) {
    if (key) member.append(el('span', 'chip group-chip', key, { title: 'Its ' + what }));
  }
  if (state.admin) member.append(modButton(e.member, !e.hidden));
  const reached = el('td', 'reached');
  reached.append(el('time', null, fmtTime(e.reached_at), { dateTime: e.reached_at, title: e.reached_at }));
  tr.append(el('td', 'rank num', e.rank), el('td', 'move'), member, ...scoreCells(e), reached, metaCell(e.metadata));
  applyMark(tr, Date.now());
  const mark = live.marks.get(e.member);
  if (mark && mark.fresh) tr.classList.add('flash'); // animates once, on the render after the event
  return tr;
}

// Metadata on demand: a <details> whose summary previews the keys.
function metaCell(meta) {
  const td = el('td', 'meta');
  if (meta === null || meta === undefined) {
    td.append(el('span', 'muted', '—'));
    return td;
  }
  const keys = typeof meta === 'object' && !Array.isArray(meta) ? Object.keys(meta) : [];
  const details = el('details');
  details.append(el('summary', null, keys.slice(0, 3).join(', ') + (keys.length > 3 ? ', …' : '') || '{ }'),
    el('pre', null, JSON.stringify(meta, null, 2)));
  td.append(details);
  return td;
}

// Applies (or clears) a row's live-update marks: class "changed" and the movement arrow.
function applyMark(tr, now) {
  const mark = live.marks.get(tr.dataset.member);
  const changed = !!mark && mark.changedUntil > now;
  tr.classList.toggle('changed', changed);
  if (!changed) tr.classList.remove('flash');
  const cell = tr.querySelector('.move');
  const d = mark && mark.moveUntil > now ? mark.delta : 0;
  const [text, cls, title] = d === null ? ['new', 'new', 'New on this page']
    : d > 0 ? ['▲' + d, 'up', 'Up ' + d] : d < 0 ? ['▼' + -d, 'down', 'Down ' + -d] : ['', '', ''];
  Object.assign(cell, { textContent: text, className: 'move ' + cls, title });
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

// Bins the sampled scores into bars. The range spans the 1st–99th percentile so that one
// outlier does not flatten the chart; scores beyond it count in the edge bars.
function drawHistogram(values, total) {
  const svg = $('histogram');
  const W = 320, H = 120;
  svg.replaceChildren();
  $('hist-caption').textContent = values.length < total
    ? 'top ' + fmtCount(values.length) + ' of ' + fmtCount(total) : fmtCount(total) + ' members';
  if (!values.length) { $('hist-min').textContent = 'no entries'; $('hist-max').textContent = ''; return; }
  const sorted = [...values].sort((a, b) => a - b);
  const cut = Math.floor(sorted.length / 100);
  const min = sorted[cut], max = sorted[sorted.length - 1 - cut];
  const bins = max === min ? 1 : Math.min(24, Math.ceil(Math.sqrt(sorted.length)) + 2);
  const width = (max - min) / bins || 1;
  const counts = new Array(bins).fill(0);
  for (const v of sorted) counts[Math.max(0, Math.min(bins - 1, Math.floor((v - min) / width)))]++;
  const top = Math.max(...counts);
  counts.forEach((count, i) => {
    const h = count ? Math.max(2, (count / top) * (H - 4)) : 0;
    const rect = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
    const attrs = { x: (i * W) / bins + 1, y: H - h, width: Math.max(1, W / bins - 2), height: h };
    for (const [k, v] of Object.entries(attrs)) rect.setAttribute(k, String(v));
    const title = document.createElementNS('http://www.w3.org/2000/svg', 'title');
    const lo = Math.round(min + i * width), hi = Math.round(min + (i + 1) * width);
    title.textContent = (bins === 1 ? String(min) : lo + ' – ' + hi) + ': ' + count + ' members';
    rect.append(title);
    svg.append(rect);
  });
  svg.setAttribute('aria-label', 'Score distribution of ' + sorted.length + ' scores from ' + sorted[0] + ' to ' + sorted[sorted.length - 1]);
  $('hist-min').textContent = (cut && sorted[0] < min ? '≤ ' : '') + min;
  $('hist-max').textContent = (cut && sorted[sorted.length - 1] > max ? '≥ ' : '') + max;
}

/* ---------- live updates ---------- */

function setLive(word) {
  $('live').textContent = word;
  $('live').dataset.state = word;
}

// With the stream open: "live" on the current period, "paused" on a past one.
function refreshLive() {
  if (live.source && live.source.readyState === EventSource.OPEN) setLive(isCurrent() ? 'live' : 'paused');
}

function connectEvents(isRetry) {
  clearTimeout(live.retry);
  if (live.source) live.source.close();
  const token = credential();
  const es = new EventSource(boardPath() + '/events' + (token ? '?access_token=' + enc(token) : ''));
  live.source = es;
  setLive(isRetry ? 'reconnecting' : 'connecting');
  es.addEventListener('open', () => {
    if (live.source !== es) return;
    refreshLive();
    if (isRetry) scheduleReload(); // a new stream does not replay what was missed
  });
  es.addEventListener('error', () => {
    if (live.source !== es) return;
    if (es.readyState !== EventSource.CLOSED) return setLive('reconnecting'); // the browser retries
    setLive('offline'); // refused (401, 404…): the browser gave up, so retry ourselves
    live.retry = setTimeout(() => connectEvents(true), 5000);
  });
  const on = (type, fn) => es.addEventListener(type, (ev) => {
    if (live.source !== es) return;
    let data = {};
    try { data = parseJson(ev.data || '{}'); } catch (_) { /* keep {} */ }
    fn(data);
  });
  on('score', (d) => onChange(d, d.member + ' → '
    + (d.scores ? Object.values(d.scores).join(' · ') : d.score) + ' (#' + d.rank + ')'));
  on('remove', (d) => onChange(d, d.member + ' removed'));
  on('reset', onReset);
  on('resync', () => { pushFeed('resync', 'missed events — reloading'); scheduleReload(); scheduleHistogram(); });
}

// A score or remove event: mark the member, reload the visible tables soon.
function onChange(d, text) {
  pushFeed(d.score === undefined ? 'remove' : 'score', text);
  if (!isCurrent() || d.period !== state.period) return;
  if (d.score !== undefined) live.pending.add(d.member);
  scheduleReload();
  scheduleHistogram();
}

// A new period began: reload the board; follow it if the current period was shown.
async function onReset(d) {
  pushFeed('reset', 'new period ' + d.period + (d.previous ? ' (was ' + d.previous + ')' : ''));
  const wasCurrent = isCurrent();
  try {
    const list = await fetchBoard();
    if (wasCurrent || !state.periods.includes(state.period)) {
      state.period = state.board.period;
      state.offset = 0;
      resetRanks();
    }
    renderBoardHead(list);
    refreshLive();
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
  $('feed').replaceChildren(...live.feed.map((f) => {
    const li = el('li', 'feed-' + f.kind);
    li.append(el('time', 'muted', clock(f.at)), ' ', el('span', null, f.text));
    return li;
  }));
  $('feed-empty').hidden = true;
}

/* ---------- wiring ---------- */

function bindBoardControls() {
  const on = (id, type, fn) => $(id).addEventListener(type, fn);
  on('ranking', 'change', () => { state.ranking = $('ranking').value; resetRanks(); loadView(); });
  on('period', 'change', () => {
    state.period = $('period').value;
    state.offset = 0;
    resetRanks();
    refreshLive();
    loadHistogram();
    loadView();
  });
  on('limit', 'change', () => {
    state.limit = Number($('limit').value);
    state.offset = Math.floor(state.offset / state.limit) * state.limit;
    loadView();
  });
  on('prev', 'click', () => { state.offset = Math.max(0, state.offset - state.limit); loadView(); });
  on('next', 'click', () => { state.offset += state.limit; loadView(); });
  on('search', 'submit', (ev) => { ev.preventDefault(); search($('search-member').value.trim()); });
  on('around-close', 'click', () => { search(null); $('search-member').focus(); });
  on('cohort-close', 'click', () => { state.cohort = null; search(null); });
  on('team-close', 'click', () => { state.team = null; loadView(); });
  on('partition-all', 'click', () => pickPartition(null));
  document.addEventListener('keydown', (ev) => { // "/" jumps to the member search
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
  if (['ordinal', 'competition', 'dense'].includes(params.get('ranking'))) state.ranking = params.get('ranking');
  if ([25, 50, 100].includes(Number(params.get('limit')))) state.limit = Number(params.get('limit'));
  state.period = params.get('period');
  state.offset = Math.max(0, parseInt(params.get('offset'), 10) || 0);
  state.search = params.get('member') || null;
  state.partition = params.get('partition') || null;
  state.team = params.get('team') || null;
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
    state.boardsOffset = Math.max(0, parseInt(params.get('offset'), 10) || 0);
    $('boards-prev').addEventListener('click', () => pageBoards(state.boardsOffset - BOARDS_PAGE));
    $('boards-next').addEventListener('click', () => pageBoards(state.boardsOffset + BOARDS_PAGE));
    setInterval(loadBoards, 30000);
    return loadBoards();
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
