// The zeroclaw dashboard: plain JavaScript, no build step (md.js renders
// Markdown and code; vendor/prism.js colours code). Everything the page
// shows is built with createElement and textContent, never innerHTML.
//
// Credentials: pairing sets an HttpOnly cookie and answers a page key,
// kept here in this origin's localStorage and sent with every request
// (X-Zeroclaw-Key) and WebSocket (subprotocol key.<key>). The browser
// sends the cookie to every port of this host; the key it gives to this
// origin only, and the gateway wants both.
//
// One WebSocket carries everything: the session list (session/watch:
// changes arrive as they happen, nothing is polled) and the open
// session's events. It reconnects on its own and resumes the session
// from the last event seen.
'use strict';

const KEY = 'zeroclaw.pageKey';
const $app = document.getElementById('app');

function pageKey() { try { return localStorage.getItem(KEY) || ''; } catch (_) { return ''; } }
function setPageKey(k) { try { if (k) localStorage.setItem(KEY, k); else localStorage.removeItem(KEY); } catch (_) { /* private mode */ } }

async function api(path, opts) {
  const headers = { 'Content-Type': 'application/json' };
  const k = pageKey();
  if (k) headers['X-Zeroclaw-Key'] = k;
  const r = await fetch(path, Object.assign({ credentials: 'same-origin', headers }, opts));
  let body = null;
  try { body = await r.json(); } catch (_) { /* no body */ }
  if (!r.ok) {
    const err = new Error((body && body.error && body.error.message) || r.statusText);
    err.status = r.status;
    throw err;
  }
  return body;
}

// ---- time ----

function relTime(ms) {
  const s = Math.round((Date.now() - ms) / 1000);
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return m + ' min ago';
  const h = Math.round(m / 60);
  if (h < 24) return h + ' h ago';
  const d = Math.round(h / 24);
  if (d === 1) return 'yesterday';
  if (d < 7) return d + ' days ago';
  return new Date(ms).toLocaleDateString(undefined, { month: 'short', day: 'numeric', year: d > 300 ? 'numeric' : undefined });
}

function timeEl(ms) {
  return el('time', { datetime: new Date(ms).toISOString(), title: new Date(ms).toLocaleString(), 'data-ms': String(ms), text: relTime(ms) });
}

// Relative times move on by themselves; nothing is asked of the daemon.
setInterval(() => { for (const t of document.querySelectorAll('time[data-ms]')) t.textContent = relTime(Number(t.dataset.ms)); }, 30000);

// ---- the WebSocket client of the socket protocol ----

class Connection {
  constructor(h) {
    this.h = h; // {onUpdate, onChanged, onRequest, onLost}
    this.next = 1;
    this.pending = new Map();
    this.closing = false;
  }
  open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws', ['zeroclaw.v1', 'key.' + pageKey()]);
      this.ws = ws;
      let opened = false;
      ws.onopen = () => { opened = true; resolve(); };
      ws.onerror = () => { if (!opened) reject(new Error('the gateway did not open a WebSocket')); };
      ws.onclose = (e) => {
        for (const p of this.pending.values()) p.reject(new Error('the connection closed'));
        this.pending.clear();
        if (!opened) reject(new Error('the gateway did not open a WebSocket'));
        else if (!this.closing) this.h.onLost(e);
      };
      ws.onmessage = (e) => { let m; try { m = JSON.parse(e.data); } catch (_) { return; } this.message(m); };
    });
  }
  message(m) {
    if (m.method === 'session/update') { this.h.onUpdate(m.params); return; }
    if (m.method === 'session/changed') { this.h.onChanged(m.params); return; }
    if (m.method && m.id !== undefined) {
      Promise.resolve(this.h.onRequest(m.method, m.params)).then(
        (result) => this.send({ jsonrpc: '2.0', id: m.id, result }),
        (err) => this.send({ jsonrpc: '2.0', id: m.id, error: { code: -32603, message: String(err.message || err) } }));
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.error) { const e = new Error(m.error.message); e.code = m.error.code; p.reject(e); } else p.resolve(m.result);
  }
  send(obj) { if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(obj)); }
  call(method, params) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) { reject(new Error('not connected')); return; }
      this.pending.set(id, { resolve, reject });
      this.send({ jsonrpc: '2.0', id, method, params: params || {} });
    });
  }
  close() { this.closing = true; if (this.ws) this.ws.close(); }
}

// ---- the app ----

const app = {
  status: null,
  sessions: new Map(), // sessionId → info, as session/list gives it
  nextCursor: null,
  query: '',
  found: null, // the search's results, or null
  current: null, // the open session's id (null: the start page)
  view: null, // its SessionView
  conn: null,
  online: false,
  retry: 0,
  models: new Map(), // agent alias → models result
  riskLevels: [], // the modes: initialize's riskLevels, least allowed first
};

async function boot() {
  if (!pageKey()) { login(); return; }
  try {
    app.status = await api('/api/status');
  } catch (e) {
    if (e.status === 401) { setPageKey(''); login('This browser\u2019s session has ended (it expired, was revoked, or logged out). Pair again.'); return; }
    $app.replaceChildren(el('div', { class: 'fatal', role: 'alert' }, el('p', { text: 'The gateway did not answer: ' + e.message }),
      el('button', { type: 'button', text: 'Try again', onclick: boot })));
    return;
  }
  shell();
  const m = /^#\/s\/([\w.-]+)$/.exec(location.hash);
  app.current = m ? m[1] : null;
  showCurrent();
  connect();
}

function login(message) {
  const code = el('input', { id: 'code', name: 'code', placeholder: 'ABCDE-FGHIJ', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'code-help' });
  const msg = el('p', { class: 'error', role: 'alert', text: message || '' });
  const form = el('form', { class: 'login', onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      const res = await api('/pair', { method: 'POST', body: JSON.stringify({ code: code.value, name: 'dashboard (' + browserName() + ')', cookie: true }) });
      setPageKey(res.key);
      boot();
    } catch (e) { msg.textContent = e.message; }
  } },
  el('h1', { text: 'zeroclaw' }),
  el('p', { id: 'code-help', class: 'muted', text: 'Pair this browser with the daemon. Get a code on the daemon\u2019s machine with:' }),
  el('pre', { text: 'zeroclaw gateway pair' }),
  el('label', { for: 'code', text: 'Pairing code' }),
  code, el('button', { type: 'submit', id: 'login', text: 'Pair this browser' }), msg);
  $app.replaceChildren(el('main', { class: 'login-page' }, form));
  code.focus();
}

function tabClientId() { try { return sessionStorage.getItem('zeroclaw.clientId') || ''; } catch (_) { return ''; } }

// messageId names one prompt or steer of this page (its clientMessageId):
// sent again after a lost connection, the daemon runs it at most once.
function messageId() {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return 'web-' + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function browserName() {
  const ua = navigator.userAgent;
  for (const [re, name] of [[/Edg\//, 'Edge'], [/Firefox\//, 'Firefox'], [/Chrom(e|ium)\//, 'Chromium'], [/Safari\//, 'Safari']]) if (re.test(ua)) return name;
  return 'browser';
}

// ---- the page's frame ----

function shell() {
  const st = app.status;
  const search = el('input', { id: 'search', type: 'search', placeholder: 'Search sessions', 'aria-label': 'Search sessions', autocomplete: 'off' });
  let timer = null;
  search.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => runSearch(search.value.trim()), 200); });
  const side = el('nav', { id: 'sidebar', 'aria-label': 'Sessions' },
    el('div', { class: 'side-head' }, el('h1', { text: 'zeroclaw' }),
      el('button', { type: 'button', id: 'new', class: 'primary', text: 'New session', title: 'New session (Alt+N)', onclick: () => newSessionPage() })),
    search,
    el('ul', { id: 'sessions', 'aria-label': 'Sessions, most recent first' }),
    el('button', { type: 'button', id: 'more', class: 'secondary', hidden: true, text: 'Show older sessions', onclick: loadMore }),
    el('div', { class: 'side-foot muted small' },
      el('span', { text: 'zeroclaw ' + st.serverVersion }),
      el('button', { type: 'button', class: 'link', text: 'Shortcuts', onclick: toggleHelp }),
      el('button', { type: 'button', class: 'link', text: 'Log out', onclick: logout })));
  const banner = el('div', { id: 'banner', role: 'status', 'aria-live': 'polite', hidden: true });
  const main = el('main', { id: 'main' });
  const backdrop = el('div', { id: 'backdrop', hidden: true, onclick: () => drawer(false) });
  $app.replaceChildren(el('div', { class: 'layout' }, side, backdrop, el('div', { class: 'content' }, banner, main)));
}

function drawer(open) {
  document.body.classList.toggle('drawer-open', open);
  const b = document.getElementById('backdrop');
  if (b) b.hidden = !open;
  const m = document.getElementById('menu');
  if (m) m.setAttribute('aria-expanded', String(open));
  if (open) { const s = document.getElementById('search'); if (s) s.focus(); }
}

function topbar(...kids) {
  return el('header', { class: 'topbar' },
    el('button', { type: 'button', id: 'menu', class: 'icon', 'aria-label': 'Sessions', 'aria-controls': 'sidebar', 'aria-expanded': 'false', onclick: () => drawer(!document.body.classList.contains('drawer-open')), text: '\u2630' }),
    ...kids);
}

async function logout() {
  try { await api('/logout', { method: 'POST' }); } catch (_) { /* gone already */ }
  setPageKey('');
  if (app.conn) app.conn.close();
  location.hash = '';
  location.reload();
}

// ---- connection and reconnection ----

function banner(text) {
  const b = document.getElementById('banner');
  if (!b) return;
  b.hidden = !text;
  b.textContent = text || '';
}

function setOnline(on) {
  app.online = on;
  document.body.classList.toggle('offline', !on);
  refreshOnline();
  if (on) banner('');
}

// refreshOnline: what sends to the daemon is disabled while offline.
function refreshOnline() {
  for (const b of document.querySelectorAll('.needs-online')) b.disabled = !app.online;
}

async function connect() {
  if (app.conn) app.conn.close();
  const conn = new Connection({
    onUpdate: (u) => { if (app.view && u.sessionId === app.view.sessionId) app.view.update(u); },
    onChanged: (c) => changed(c),
    onRequest: (m, p) => app.view ? app.view.request(m, p) : Promise.reject(new Error('no session is open')),
    onLost: () => { if (app.conn === conn) lost(); },
  });
  app.conn = conn;
  try {
    await conn.open();
    // The same clientId across reconnects and reloads of this tab: the
    // page's own prompts stay its own.
    const init = await conn.call('initialize', { protocolVersion: 1, clientId: app.clientId || tabClientId() || undefined,
      clientInfo: { name: 'dashboard (' + browserName() + ')', version: '2' },
      clientCapabilities: { elicitation: { form: {}, url: {} }, maxFrameBytes: 16777216 } });
    app.clientId = init.clientId;
    app.riskLevels = init.riskLevels || [];
    if (app.view) modeOptions(app.view.modeSel);
    try { sessionStorage.setItem('zeroclaw.clientId', init.clientId); } catch (_) { /* private mode */ }
    await conn.call('session/watch', {});
    await loadList();
    if (app.view) await app.view.attach(conn);
    if (app.conn !== conn) return;
    app.retry = 0;
    setOnline(true);
    const nm = document.getElementById('new-model'), na = document.getElementById('new-agent');
    if (nm && na && nm.options.length === 0) modelOptions(nm, na.value, null);
  } catch (e) {
    if (app.conn !== conn) return;
    if (app.view && app.view.fatal(e)) { setOnline(true); return; }
    conn.close();
    lost();
  }
}

// lost: the connection dropped. Sending stops, a banner says so, and the
// page reconnects by itself (backing off), then resumes from the last
// event it showed.
async function lost() {
  setOnline(false);
  const wait = Math.min(250 * 2 ** app.retry, 5000);
  app.retry++;
  banner('Connection to the daemon lost \u2014 reconnecting\u2026');
  await new Promise((r) => setTimeout(r, wait));
  try {
    await api('/api/status');
  } catch (e) {
    if (e.status === 401) { setPageKey(''); login('This browser\u2019s session has ended (it expired or was revoked). Pair again.'); return; }
    lost();
    return;
  }
  connect();
}

// ---- the session list ----

async function loadList() {
  const res = await app.conn.call('session/list', { limit: 100 });
  app.sessions.clear();
  for (const s of res.sessions) app.sessions.set(s.sessionId, s);
  app.nextCursor = res.nextCursor;
  renderList();
}

async function loadMore() {
  if (!app.nextCursor || !app.conn) return;
  const res = await app.conn.call('session/list', { limit: 100, cursor: app.nextCursor });
  for (const s of res.sessions) app.sessions.set(s.sessionId, s);
  app.nextCursor = res.nextCursor;
  renderList();
}

async function runSearch(q) {
  app.query = q;
  if (!q) { app.found = null; renderList(); return; }
  try {
    const res = await app.conn.call('session/list', { query: q, limit: 100 });
    if (app.query !== q) return;
    app.found = res.sessions;
  } catch (_) {
    const lq = q.toLowerCase();
    app.found = [...app.sessions.values()].filter((s) => (s.title + ' ' + s.sessionId + ' ' + s.cwd).toLowerCase().includes(lq));
  }
  renderList();
}

function changed(c) {
  if (c.deleted) {
    app.sessions.delete(c.sessionId);
    if (app.found) app.found = app.found.filter((s) => s.sessionId !== c.sessionId);
    if (app.view && app.view.sessionId === c.sessionId) app.view.notice('This session was deleted.');
  } else if (c.session) {
    app.sessions.set(c.sessionId, c.session);
    if (app.found) app.found = app.found.map((s) => (s.sessionId === c.sessionId ? c.session : s));
    if (app.view && app.view.sessionId === c.sessionId) app.view.setInfo(c.session);
  }
  renderList();
}

function sessionTitle(s) { return s.title || 'Untitled session'; }

// costOf is a usage's cost in dollars ("$0.0123"), '' when no price is known.
function costOf(u) { return u && typeof u.costUsd === 'number' ? '$' + u.costUsd.toFixed(4) : ''; }

function renderList() {
  const list = document.getElementById('sessions');
  if (!list) return;
  // A title being edited in the list keeps its input: drawing the list
  // again would take the input away (its blur would end the edit in the
  // middle of the redraw); the list is drawn when the edit ends.
  if (app.renaming) return;
  const items = nestChildren(app.found || [...app.sessions.values()].sort((a, b) => b.updatedMs - a.updatedMs || (a.sessionId < b.sessionId ? 1 : -1)));
  if (items.length === 0) {
    list.replaceChildren(el('li', { class: 'empty muted', text: app.found ? 'No session matches.' : 'No sessions yet.' }));
  } else {
    list.replaceChildren(...items.map((s) => {
      const current = s.sessionId === app.current;
      const nested = s.nested || 0;
      return el('li', { class: 'session-item' + (current ? ' current' : '') + (nested ? ' child nest-' + nested : ''), 'data-id': s.sessionId },
        el('button', { type: 'button', class: 'session', 'aria-current': current ? 'page' : null, onclick: () => openSession(s.sessionId),
          title: s.parentSessionId ? 'a sub-agent of ' + s.parentSessionId : null },
          el('span', { class: 'title' + (s.title ? '' : ' untitled'), text: (nested ? '\u21b3 ' : '') + sessionTitle(s) }),
          el('span', { class: 'meta' }, timeEl(s.updatedMs || s.createdMs),
            s.state !== 'idle' ? el('span', { class: 'state ' + s.state, text: s.state }) : null,
            costOf(s.usage) ? el('span', { class: 'cost', title: 'what this session has cost', text: costOf(s.usage) }) : null,
            el('span', { class: 'cwd', text: s.cwd }))),
        el('button', { type: 'button', class: 'icon rename', 'aria-label': 'Rename \u201c' + sessionTitle(s) + '\u201d', title: 'Rename', text: '\u270e', onclick: () => rename(s.sessionId) }),
        el('button', { type: 'button', class: 'icon delete', 'aria-label': 'Delete \u201c' + sessionTitle(s) + '\u201d', title: 'Delete', text: '\u2715', onclick: () => remove(s.sessionId) }));
    }));
  }
  const more = document.getElementById('more');
  if (more) more.hidden = !!app.found || !app.nextCursor;
}

// nestChildren puts each sub-agent's session right under its parent
// (indented, its children under it), the oldest first; one whose parent
// is not listed stays where it is.
function nestChildren(items) {
  const ids = new Set(items.map((s) => s.sessionId));
  const kids = new Map();
  for (const s of items) {
    if (s.parentSessionId && ids.has(s.parentSessionId)) {
      if (!kids.has(s.parentSessionId)) kids.set(s.parentSessionId, []);
      kids.get(s.parentSessionId).push(s);
    }
  }
  const out = [];
  const walk = (s, depth) => {
    out.push(depth ? Object.assign({}, s, { nested: depth }) : s);
    for (const k of (kids.get(s.sessionId) || []).sort((a, b) => a.createdMs - b.createdMs)) if (depth < 4) walk(k, depth + 1);
  };
  for (const s of items) if (!(s.parentSessionId && ids.has(s.parentSessionId))) walk(s, 0);
  return out;
}

// rename edits a session's title in place: in its list item, or in host.
function rename(id, host) {
  const s = app.sessions.get(id) || {};
  const item = host || document.querySelector('#sessions li[data-id="' + CSS.escape(id) + '"]');
  const input = el('input', { class: 'rename-input', value: s.title || '', 'aria-label': 'New title', maxlength: '200' });
  let done = false;
  const finish = async (save) => {
    if (done) return;
    done = true;
    if (!host) app.renaming = false;
    if (save && input.value.trim() !== (s.title || '')) {
      try { changed({ sessionId: id, session: await app.conn.call('session/rename', { sessionId: id, title: input.value }) }); } catch (e) { alert('Rename failed: ' + e.message); }
    }
    renderList();
    if (app.view && app.view.sessionId === id && app.sessions.get(id)) app.view.setInfo(app.sessions.get(id));
  };
  input.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') { ev.preventDefault(); finish(true); } else if (ev.key === 'Escape') { ev.preventDefault(); ev.stopPropagation(); finish(false); } });
  input.addEventListener('blur', () => finish(true));
  if (!item) return;
  if (!host) app.renaming = true;
  item.replaceChildren(input);
  input.focus();
  input.select();
}

async function remove(id) {
  const s = app.sessions.get(id) || { sessionId: id };
  if (!confirm('Delete \u201c' + sessionTitle(s) + '\u201d and its history? This cannot be undone.')) return;
  try {
    await app.conn.call('session/delete', { sessionId: id });
    changed({ sessionId: id, deleted: true });
    if (app.current === id) newSessionPage();
  } catch (e) { alert('Delete failed: ' + e.message); }
}

// ---- pages ----

function openSession(id) {
  drawer(false);
  if (app.current === id && app.view) { app.view.input.focus(); return; }
  app.current = id;
  history.replaceState(null, '', '#/s/' + id);
  showCurrent();
  renderList();
  connect(); // a new connection: attached to this session only
}

function newSessionPage() {
  drawer(false);
  app.current = null;
  history.replaceState(null, '', '#');
  showCurrent();
  renderList();
  if (app.view) { const v = app.view; app.view = null; v.dispose(); connect(); }
}

function showCurrent() {
  const main = document.getElementById('main');
  if (!main) return;
  if (app.current) {
    app.view = new SessionView(app.current, null);
    main.replaceChildren(...app.view.nodes());
  } else {
    app.view = null;
    main.replaceChildren(...startPage());
  }
  refreshOnline();
}

function startPage() {
  const agents = app.status.agents && app.status.agents.length ? app.status.agents : [{ alias: 'default', model: app.status.model }];
  const agent = el('select', { id: 'new-agent' }, agents.map((a) => el('option', { value: a.alias, text: a.alias + (a.model ? ' \u00b7 ' + a.model : '') })));
  const model = el('select', { id: 'new-model' });
  const cwd = el('input', { id: 'new-cwd', placeholder: 'the daemon\u2019s directory', autocomplete: 'off', spellcheck: 'false' });
  const msg = el('p', { class: 'error', role: 'alert' });
  const fillModels = async () => { await modelOptions(model, agent.value, null); };
  agent.addEventListener('change', fillModels);
  fillModels();
  const form = el('form', { id: 'new-session', class: 'card', onsubmit: (ev) => {
    ev.preventDefault();
    msg.textContent = '';
    app.current = null;
    app.view = new SessionView(null, { agentAlias: agent.value, cwd: cwd.value.trim(), model: model.value });
    document.getElementById('main').replaceChildren(...app.view.nodes());
    refreshOnline();
    connect();
  } },
  el('h2', { text: 'New session' }),
  el('label', { for: 'new-agent', text: 'Agent' }), agent,
  el('label', { for: 'new-model', text: 'Model' }), model,
  el('label', { for: 'new-cwd', text: 'Working directory (absolute)' }), cwd,
  el('button', { type: 'submit', id: 'start', class: 'primary needs-online', text: 'Start' }), msg);
  return [topbar(el('h2', { class: 'session-title', text: 'Start a session' })),
    el('div', { class: 'start' }, form, el('p', { class: 'muted', text: 'Or pick a session from the list. Press ? for keyboard shortcuts.' }))];
}

// modelOptions fills a model picker from models {agentAlias}; current
// is the session's model (null: the agent's).
async function modelOptions(select, alias, current) {
  let res = app.models.get(alias);
  if (!res && app.conn && app.online) {
    try { res = await app.conn.call('models', { agentAlias: alias }); app.models.set(alias, res); } catch (_) { res = null; }
  }
  const list = res ? res.models.slice() : [];
  const chosen = current || (res && res.current) || '';
  if (chosen && !list.includes(chosen)) list.unshift(chosen);
  select.replaceChildren(...list.map((m) => el('option', { value: m, text: m, selected: m === chosen })));
  select.disabled = list.length === 0;
}

// ---- one session ----

// ANSWER_SCOPE says where and how long an approval's "always" answer
// holds, as the daemon keeps it: the session's in memory with the live
// session, the project's stored for later sessions there too.
const ANSWER_SCOPE = {
  allow_once: 'once', reject_once: '',
  allow_always: 'for the rest of this session (not stored): every call', allow_always_input: 'for the rest of this session (not stored): this exact input',
  reject_always: 'for the rest of this session (not stored): every call',
  allow_project: 'in this project, this session and later ones, until revoked: every call', allow_project_input: 'in this project, this session and later ones, until revoked: this exact input',
  reject_project: 'in this project, this session and later ones, until revoked: every call',
};
const TOOL_STATUS = { waiting: 'waiting for approval', running: 'running', done: 'done', failed: 'failed', refused: 'refused', stopped: 'stopped' };

// modeOptions fills a mode picker with the modes: the daemon's risk
// levels (initialize's riskLevels), least allowed first, keeping the
// mode chosen.
function modeOptions(select) {
  const chosen = select.value;
  select.replaceChildren(...app.riskLevels.map((m) => el('option', { value: m.id, text: m.name, title: m.description })));
  if (chosen) select.value = chosen;
}

// EVENTS_LEFT_OUT are the event types the conversation does not show: a
// hook's run (a blocked call shows as its tool's result), what became of
// an input (the prompt and the queue show it), a turn cut by a daemon's
// end (its turn_resumed says it). Every other type of the daemon's
// capabilities.events has its case in SessionView.update; the browser
// test feeds it one of each and fails for a type that is neither.
const EVENTS_LEFT_OUT = ['hook', 'input_update', 'turn_interrupted'];

class SessionView {
  // id: the session to open; fresh: {agentAlias, cwd, model} to make one.
  constructor(id, fresh) {
    this.sessionId = id;
    this.fresh = fresh;
    this.seen = 0;
    this.answer = null;
    this.thought = null;
    this.tools = new Map(); // toolCallId → card
    this.approvals = new Map(); // requestId → {card, toolCallId}
    this.running = false;
    this.files = [];
    // outbox: prompts and steers sent and not yet answered, by their
    // clientMessageId; a lost connection's are sent again after the
    // reconnect (attach), under the same id.
    this.outbox = new Map();
    this.info = id ? app.sessions.get(id) : null;
    this.build();
  }
  build() {
    this.titleEl = el('h2', { class: 'session-title', id: 'session-title', text: this.info ? sessionTitle(this.info) : (this.sessionId ? 'Loading\u2026' : 'New session') });
    this.model = el('select', { id: 'model', 'aria-label': 'Model', class: 'needs-online' });
    this.model.addEventListener('change', () => this.configure());
    // The mode (the session's risk level): the daemon's list
    // (protocol.RiskLevels), least allowed first.
    this.modeSel = el('select', { id: 'mode', 'aria-label': 'Mode', class: 'needs-online', title: 'How much the agent may do without asking' });
    modeOptions(this.modeSel);
    this.modeSel.addEventListener('change', () => this.switchMode());
    this.meta = el('span', { class: 'muted small meta-line' });
    this.log = el('div', { id: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation', 'aria-busy': 'false' });
    this.input = el('textarea', { id: 'prompt', rows: 2, placeholder: 'Message the agent \u2014 Enter sends, Shift+Enter adds a line', 'aria-label': 'Message' });
    this.fileInput = el('input', { type: 'file', id: 'file', multiple: true, class: 'sr-only', 'aria-label': 'Attach files' });
    this.fileInput.addEventListener('change', () => { this.addFiles([...this.fileInput.files]); this.fileInput.value = ''; });
    this.attached = el('ul', { class: 'attached', 'aria-label': 'Attached files' });
    this.send = el('button', { type: 'submit', id: 'send', class: 'primary needs-online', text: 'Send' });
    this.cancel = el('button', { type: 'button', id: 'cancel', class: 'secondary needs-online', text: 'Stop', title: 'Stop the turn (Esc)', hidden: true, onclick: () => this.stop() });
    // While a turn runs (this page's or another client's), Steer sends the
    // message into it; Send queues it behind.
    this.steerBtn = el('button', { type: 'button', id: 'steer', class: 'secondary needs-online', text: 'Steer', title: 'Send it into the running turn: the agent reads it at its next step (Alt+S)', hidden: true, onclick: () => this.steer() });
    this.queueEl = el('ol', { id: 'queue', class: 'queue', 'aria-label': 'Prompts waiting behind the running turn', hidden: true });
    // The session's background processes: each with its state, its
    // output (followed while open) and a Stop button.
    this.procs = new Map(); // id → {info, row, state, out, toggle, kill, next, timer}
    this.procList = el('ul', { class: 'proc-list' });
    this.procsEl = el('section', { id: 'processes', class: 'processes card', 'aria-label': 'Background processes', hidden: true },
      el('div', { class: 'card-title', text: 'Background processes' }), this.procList);
    // The session's goal: its objective, state and progress, with Pause,
    // Resume and Clear; a form sets one.
    this.goalEl = el('section', { id: 'goal', class: 'goal card', 'aria-label': 'Goal', hidden: true });
    this.goalForm = el('form', { id: 'goal-form', class: 'goal-form card', 'aria-label': 'Set a goal', hidden: true, onsubmit: (ev) => { ev.preventDefault(); this.setGoal(); } },
      el('div', { class: 'card-title', text: 'Set a goal' }),
      el('label', { for: 'goal-objective', class: 'small', text: 'Objective (the agent works toward it turn after turn)' }),
      el('textarea', { id: 'goal-objective', rows: 2 }),
      el('label', { for: 'goal-usd', class: 'small', text: 'Budget in USD (optional)' }),
      el('input', { id: 'goal-usd', type: 'number', min: '0', step: '0.01' }),
      el('label', { for: 'goal-turns', class: 'small', text: 'At most this many turns (optional)' }),
      el('input', { id: 'goal-turns', type: 'number', min: '1', step: '1' }),
      el('div', { class: 'buttons' }, el('button', { type: 'submit', class: 'primary needs-online', text: 'Start' }),
        el('button', { type: 'button', class: 'secondary', text: 'Close', onclick: () => { this.goalForm.hidden = true; } })));
    // The schedules that run in this session: each with its next and last
    // runs, Run now, Pause or Resume, Delete; a form adds one.
    this.schedList = el('ul', { class: 'sched-list', id: 'schedule-list' });
    this.schedEl = el('section', { id: 'schedules', class: 'schedules card', 'aria-label': 'Schedules', hidden: true },
      el('div', { class: 'card-title', text: 'Schedules' }), this.schedList,
      el('form', { id: 'schedule-form', class: 'sched-form', 'aria-label': 'Add a schedule', onsubmit: (ev) => { ev.preventDefault(); this.addSchedule(); } },
        el('label', { for: 'schedule-kind', class: 'sr-only', text: 'When kind' }),
        el('select', { id: 'schedule-kind' }, el('option', { value: 'every', text: 'every' }), el('option', { value: 'at', text: 'at' }), el('option', { value: 'cron', text: 'cron' })),
        el('label', { for: 'schedule-when', class: 'sr-only', text: 'When' }),
        el('input', { id: 'schedule-when', placeholder: '10m, 17:30 or 0 9 * * 1-5' }),
        el('label', { for: 'schedule-prompt', class: 'sr-only', text: 'Prompt' }),
        el('input', { id: 'schedule-prompt', placeholder: 'the prompt to run' }),
        el('button', { type: 'submit', class: 'primary small-button needs-online', text: 'Add' })));
    this.who = el('span', { id: 'attached-clients', class: 'muted small who' });
    this.footer = el('div', { id: 'footer', class: 'muted small', 'aria-live': 'off' });
    this.composer = el('form', { id: 'composer', onsubmit: (ev) => { ev.preventDefault(); this.submit(); } },
      this.queueEl,
      this.attached,
      el('div', { class: 'composer-row' },
        el('label', { class: 'button secondary icon-label', for: 'file', title: 'Attach files (or drop or paste them)', text: 'Attach' }), this.fileInput,
        this.input, el('div', { class: 'buttons' }, this.cancel, this.steerBtn, this.send)));
    this.input.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); this.submit(); } });
    this.input.addEventListener('paste', (ev) => { const fs = [...(ev.clipboardData && ev.clipboardData.files || [])]; if (fs.length) { ev.preventDefault(); this.addFiles(fs); } });
    this.log.addEventListener('dragover', (ev) => ev.preventDefault());
    this.log.addEventListener('drop', (ev) => { ev.preventDefault(); this.addFiles([...ev.dataTransfer.files]); });
  }
  nodes() {
    const renameBtn = el('button', { type: 'button', class: 'icon', 'aria-label': 'Rename this session', title: 'Rename', text: '\u270e', onclick: () => this.sessionId && rename(this.sessionId, this.titleEl) });
    const forkBtn = el('button', { type: 'button', id: 'fork', class: 'secondary small-button needs-online', title: 'Continue in a new session from this conversation (this one stays)', text: 'Fork', onclick: () => this.fork() });
    const exportSel = el('select', { id: 'export', class: 'needs-online', 'aria-label': 'Export the session', title: 'Download the session as a document' },
      el('option', { value: '', text: 'Export\u2026' }), el('option', { value: 'markdown', text: 'Markdown' }), el('option', { value: 'html', text: 'HTML' }), el('option', { value: 'json', text: 'JSON' }));
    exportSel.addEventListener('change', () => { const f = exportSel.value; exportSel.value = ''; if (f) this.exportAs(f); });
    const goalBtn = el('button', { type: 'button', id: 'goal-open', class: 'secondary small-button needs-online', title: 'Give the session a goal it works toward turn after turn', text: 'Goal',
      onclick: () => { this.goalForm.hidden = !this.goalForm.hidden; if (!this.goalForm.hidden) this.goalForm.querySelector('textarea').focus(); } });
    const schedBtn = el('button', { type: 'button', id: 'schedules-open', class: 'secondary small-button needs-online', title: 'Prompts that run in this session at due times', text: 'Schedules',
      onclick: () => { this.schedEl.hidden = !this.schedEl.hidden; if (!this.schedEl.hidden) this.loadSchedules(); } });
    return [topbar(this.titleEl, renameBtn, el('div', { class: 'pickers' }, this.meta, this.who, this.modeSel, this.model, goalBtn, schedBtn, forkBtn, exportSel)), this.goalEl, this.goalForm, this.schedEl, this.procsEl, this.log, this.composer, this.footer];
  }
  // showGoal shows the session's goal (null: none).
  showGoal(g) {
    this.goalEl.hidden = !g || g.state === 'cleared';
    if (this.goalEl.hidden) { this.goalEl.replaceChildren(); return; }
    const b = g.budget || {}, sp = g.spent || {};
    const parts = [g.turns + ' turn' + (g.turns === 1 ? '' : 's') + (b.turns ? ' of ' + b.turns : '')];
    if (b.usd) parts.push('$' + (sp.usd || 0).toFixed(4) + ' of $' + b.usd.toFixed(2));
    else if (sp.usd) parts.push('$' + sp.usd.toFixed(4));
    if (b.tokens) parts.push((sp.tokens || 0) + ' of ' + b.tokens + ' tokens');
    const frac = b.usd ? (sp.usd || 0) / b.usd : b.turns ? g.turns / b.turns : b.tokens ? (sp.tokens || 0) / b.tokens : null;
    const chip = { active: 'running', blocked: 'waiting', met: 'done', budget_exhausted: 'failed', paused: '' }[g.state] || '';
    const btn = (text, action) => el('button', { type: 'button', class: 'secondary small-button needs-online goal-' + action, text, onclick: () => this.goalCall(action) });
    this.goalEl.replaceChildren(
      el('div', { class: 'card-title' }, document.createTextNode('Goal'), el('span', { class: 'chip goal-state ' + chip, text: g.state.replace('_', ' ') })),
      el('p', { class: 'goal-objective', text: g.objective.split('\n')[0] }),
      frac !== null ? el('progress', { class: 'goal-progress', max: '1', value: String(Math.min(frac, 1)), 'aria-label': 'Goal budget spent' }) : null,
      el('p', { class: 'small muted goal-spent', text: parts.join(' \u00b7 ') + (g.summary ? ' \u2014 ' + g.summary : g.reason ? ' \u2014 ' + g.reason : '') }),
      el('div', { class: 'buttons' }, g.state === 'active' || g.state === 'blocked' ? btn('Pause', 'pause') : null,
        g.state === 'paused' || g.state === 'blocked' || g.state === 'budget_exhausted' ? btn('Resume', 'resume') : null, btn('Clear', 'clear')));
    refreshOnline();
  }
  async goalCall(action) {
    try { this.showGoal((await app.conn.call('session/goal/' + action, { sessionId: this.sessionId })).goal); } catch (e) { this.notice('Goal: ' + e.message); }
  }
  async setGoal() {
    const objective = this.goalForm.querySelector('#goal-objective').value.trim();
    if (!objective) return;
    const usd = parseFloat(this.goalForm.querySelector('#goal-usd').value), turns = parseInt(this.goalForm.querySelector('#goal-turns').value, 10);
    const budget = {};
    if (usd > 0) budget.usd = usd;
    if (turns > 0) budget.turns = turns;
    try {
      const r = await app.conn.call('session/goal', { sessionId: this.sessionId, objective, budget: Object.keys(budget).length ? budget : undefined });
      this.showGoal(r.goal);
      this.goalForm.hidden = true;
      this.goalForm.reset();
    } catch (e) { this.notice('Could not set the goal: ' + e.message); }
  }
  // loadSchedules lists the schedules that run in this session.
  async loadSchedules() {
    const mine = [];
    try {
      // Paged: each page bounded, whatever is stored.
      for (let cursor = ''; ;) {
        const l = await app.conn.call('schedule/list', cursor ? { cursor } : {});
        mine.push(...l.schedules.filter((s) => s.sessionId === this.sessionId));
        if (!(cursor = l.nextCursor)) break;
      }
    } catch (e) { this.notice('Could not list the schedules: ' + e.message); return; }
    const when = (s) => s.cron || (s.every ? 'every ' + s.every : 'at ' + new Date(s.at).toLocaleString());
    this.schedList.replaceChildren(...(mine.length ? mine.map((s) => {
      const paused = s.enabled === false;
      const btn = (text, f, cls) => el('button', { type: 'button', class: 'secondary small-button needs-online ' + cls, text, onclick: f });
      return el('li', { class: 'sched', 'data-id': s.scheduleId },
        el('span', { class: 'sched-when', text: when(s) }),
        el('span', { class: 'sched-prompt', text: s.prompt.split('\n')[0] }),
        el('span', { class: 'small muted sched-state', text: (paused ? 'paused' + (s.pausedReason ? ': ' + s.pausedReason : '') : s.nextRunMs ? 'next ' + new Date(s.nextRunMs).toLocaleString() : 'no more runs') +
          (s.lastRun ? ' \u00b7 last ' + s.lastRun.state : '') + (s.waiting ? ' \u00b7 waiting for an approval' : '') + ' \u00b7 ' + s.runs + ' runs' }),
        btn('Run now', () => this.schedCall('schedule/run', { scheduleId: s.scheduleId }), 'sched-run'),
        btn(paused ? 'Resume' : 'Pause', () => this.schedCall('schedule/update', { scheduleId: s.scheduleId, enabled: paused }), 'sched-toggle'),
        el('button', { type: 'button', class: 'icon needs-online sched-delete', 'aria-label': 'Delete the schedule ' + when(s), text: '\u2715', onclick: () => this.schedCall('schedule/delete', { scheduleId: s.scheduleId }) }));
    }) : [el('li', { class: 'small muted', text: 'No schedule runs in this session.' })]));
    refreshOnline();
  }
  async schedCall(method, params) {
    try { await app.conn.call(method, params); } catch (e) { this.notice('Schedule: ' + e.message); }
    this.loadSchedules();
  }
  async addSchedule() {
    const f = this.schedEl.querySelector('#schedule-form');
    const kind = f.querySelector('#schedule-kind').value, v = f.querySelector('#schedule-when').value.trim(), prompt = f.querySelector('#schedule-prompt').value.trim();
    if (!v || !prompt) return;
    try {
      await app.conn.call('schedule/create', { sessionId: this.sessionId, prompt, [kind]: v });
      f.reset();
    } catch (e) { this.notice('Could not add the schedule: ' + e.message); }
    this.loadSchedules();
  }
  // fork makes a new session from this conversation and opens it.
  async fork() {
    if (!this.sessionId) return;
    try {
      const r = await app.conn.call('session/fork', { sessionId: this.sessionId });
      openSession(r.sessionId);
    } catch (e) { this.notice('Could not fork: ' + e.message); }
  }
  // exportAs downloads the session as a document (a blob: the page's key never leaves it).
  async exportAs(format) {
    try {
      const r = await app.conn.call('session/export', { sessionId: this.sessionId, format });
      const type = { markdown: 'text/markdown', html: 'text/html', json: 'application/json' }[r.format];
      const a = el('a', { href: URL.createObjectURL(new Blob([r.content], { type })), download: this.sessionId + '.' + ({ markdown: 'md' }[r.format] || r.format) });
      document.body.append(a);
      a.click();
      setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    } catch (e) { this.notice('Could not export: ' + e.message); }
  }
  // undoFrom shows what rewinding to before the turn that began at seq
  // would restore (its diff), and asks.
  async undoFrom(seq, box) {
    let cps, diff;
    try {
      cps = await app.conn.call('session/checkpoints', { sessionId: this.sessionId });
    } catch (e) { this.notice('Could not read the checkpoints: ' + e.message); return; }
    const cp = cps.checkpoints.find((c) => c.seq === seq);
    if (!cp) { this.notice('This turn has no checkpoint (it is older than the ones kept).'); return; }
    try { diff = await app.conn.call('session/diff', { sessionId: this.sessionId, turn: cp.turn }); } catch (e) { diff = { diff: '' }; }
    const later = cps.checkpoints.filter((c) => c.turn >= cp.turn && !c.rewound);
    const files = later.reduce((n, c) => n + c.files.length, 0);
    const panel = el('div', { class: 'undo-panel card', role: 'group', 'aria-label': 'Undo turn ' + cp.turn },
      el('div', { class: 'card-title', text: 'Go back to before turn ' + cp.turn }),
      el('p', { class: 'small', text: (later.length > 1 ? 'Turns ' + cp.turn + '\u2013' + later[later.length - 1].turn : 'Turn ' + cp.turn) + ': ' + files + ' file change(s) undone; the conversation from here is left out of the model\u2019s view.' }),
      diff.diff ? el('pre', { class: 'diff' }, ...diff.diff.split('\n').map((l) => el('span', { class: l.startsWith('+') ? 'diff-add' : l.startsWith('-') ? 'diff-del' : '', text: l + '\n' }))) : el('p', { class: 'small muted', text: 'This turn changed no file.' }));
    const go = async (force) => {
      try {
        const r = await app.conn.call('session/rewind', { sessionId: this.sessionId, turn: cp.turn, force });
        if (!r.rewound) {
          panel.append(el('p', { class: 'error small', role: 'alert', text: 'Changed since the agent\u2019s turn: ' + (r.conflicts || []).map((c) => c.path + ' (' + c.reason + ')').join(', ') }),
            el('button', { type: 'button', class: 'secondary', text: 'Overwrite them', onclick: () => go(true) }));
          return;
        }
        panel.remove();
      } catch (e) { panel.append(el('p', { class: 'error small', role: 'alert', text: e.message })); }
    };
    panel.append(el('div', { class: 'buttons' },
      el('button', { type: 'button', class: 'primary', text: 'Undo', onclick: () => go(false) }),
      el('button', { type: 'button', class: 'secondary', text: 'Keep', onclick: () => panel.remove() })));
    box.after(panel);
    panel.querySelector('button.primary').focus();
  }
  dispose() { this.disposed = true; }
  notice(text) { this.log.append(el('p', { class: 'notice', role: 'alert', text })); }
  fatal(e) {
    if (this.attachedOnce) return false;
    this.log.append(el('p', { class: 'error', role: 'alert', text: 'Could not open the session: ' + e.message }));
    return e.code !== undefined; // the daemon answered: reconnecting will not help
  }
  setInfo(info) {
    this.info = info;
    this.titleEl.textContent = sessionTitle(info);
    document.title = sessionTitle(info) + ' \u2014 zeroclaw';
    if (info.live) this.showAttached(info.attached || []);
  }
  // showAttached says who else has the session open.
  showAttached(list) {
    const others = list.filter((c) => c.clientId !== app.clientId);
    this.who.textContent = others.length ? 'also here: ' + others.map((c) => c.clientName || c.clientId).join(', ') : '';
    this.who.title = others.map((c) => (c.clientName ? c.clientName + ' ' : '') + '(' + c.clientId + ')').join('\n');
  }
  // showQueue lists the prompts waiting behind the running turn, each
  // with who queued it, Steer now and Remove.
  showQueue(items) {
    this.queueEl.hidden = items.length === 0;
    this.queueEl.replaceChildren(...items.map((it, i) => el('li', { 'data-id': it.id },
      el('span', { class: 'muted', text: (i + 1) + '.' }),
      el('span', { class: 'queue-text', text: it.text }),
      it.clientName || it.clientId ? el('span', { class: 'muted small', text: ' \u00b7 ' + (it.clientId === app.clientId ? 'you' : it.clientName || it.clientId) }) : null,
      el('button', { type: 'button', class: 'secondary small-button needs-online queue-steer', text: 'Steer now', title: 'Move it into the running turn', onclick: () => this.queueCall('session/queue/steer', it.id) }),
      el('button', { type: 'button', class: 'icon needs-online queue-remove', 'aria-label': 'Remove from the queue: ' + it.text, text: '\u2715', onclick: () => this.queueCall('session/queue/remove', it.id) }))));
    refreshOnline();
  }
  // showProcess adds or updates a background process's row.
  showProcess(p) {
    let r = this.procs.get(p.id);
    if (!r) {
      r = { next: Math.max(0, (p.outputBytes || 0) - 8192) };
      r.state = el('span', { class: 'proc-state chip' });
      r.out = el('pre', { class: 'proc-output', 'aria-label': 'Output of ' + p.id, 'aria-live': 'off', hidden: true });
      r.toggle = el('button', { type: 'button', class: 'secondary small-button needs-online proc-toggle', 'aria-expanded': 'false', text: 'Output', 'aria-label': 'Show the output of ' + p.id, onclick: () => this.toggleOutput(p.id) });
      r.kill = el('button', { type: 'button', class: 'secondary small-button needs-online proc-kill', text: 'Stop', 'aria-label': 'Stop ' + p.id, onclick: () => this.killProcess(p.id) });
      r.row = el('li', { class: 'proc', 'data-id': p.id },
        el('div', { class: 'proc-head' },
          el('code', { class: 'proc-id', text: p.id }),
          el('span', { class: 'proc-command', text: p.command || '' }),
          r.state, r.toggle, r.kill),
        r.out);
      this.procs.set(p.id, r);
      this.procList.append(r.row);
    }
    r.info = p;
    r.row.dataset.state = p.state;
    r.state.textContent = p.state === 'running' ? 'running, pid ' + p.pid : p.state + (typeof p.exitCode === 'number' ? ' (' + p.exitCode + ')' : p.signal ? ' (' + p.signal + ')' : '');
    r.kill.hidden = p.state !== 'running';
    this.procsEl.hidden = false;
    if (!r.out.hidden) this.followOutput(p.id);
    refreshOnline();
  }
  // pruneProcesses leaves out, as a new turn starts, the processes that
  // ended before it (unless their output is open): the panel is for what
  // runs.
  pruneProcesses() {
    for (const [id, r] of this.procs) {
      if (r.info.state !== 'running' && r.out.hidden) { clearTimeout(r.timer); r.row.remove(); this.procs.delete(id); }
    }
    this.procsEl.hidden = this.procs.size === 0;
  }
  toggleOutput(id) {
    const r = this.procs.get(id);
    r.out.hidden = !r.out.hidden;
    r.toggle.setAttribute('aria-expanded', String(!r.out.hidden));
    if (!r.out.hidden) this.followOutput(id);
  }
  // followOutput reads what the process printed since the last read,
  // and again while it runs and its output is open: each read waits for
  // more (waitMs), so nothing is polled.
  async followOutput(id) {
    const r = this.procs.get(id);
    if (!r || r.reading || this.disposed) return;
    clearTimeout(r.timer);
    r.reading = true;
    try {
      const o = await app.conn.call('process/output', { sessionId: this.sessionId, id, since: r.next, plainText: true, waitMs: r.next > 0 ? 10000 : 0 });
      if (o.dropped > 0) r.out.append(el('span', { class: 'muted', text: '[' + o.dropped + ' bytes dropped]\n' }));
      if (o.output) r.out.append(document.createTextNode(o.output));
      r.next = o.next;
      r.out.scrollTop = r.out.scrollHeight;
      if (o.state === 'running' && !r.out.hidden) r.timer = setTimeout(() => this.followOutput(id), 0);
    } catch (e) {
      r.out.append(el('span', { class: 'error', text: '[' + e.message + ']\n' }));
    } finally { r.reading = false; }
  }
  async killProcess(id) {
    try { await app.conn.call('process/kill', { sessionId: this.sessionId, id }); } catch (e) { this.notice('Could not stop ' + id + ': ' + e.message); }
  }
  async queueCall(method, id) {
    try {
      const r = await app.conn.call(method, { sessionId: this.sessionId, id });
      if (r.outcome === 'promptRequired') this.notice('No turn is running: it runs in its turn.');
    } catch (e) { this.notice(e.message); }
  }
  // steer sends the message into the running turn.
  async steer() {
    const text = this.input.value;
    if (!text.trim() || !app.online || !this.sessionId) return;
    this.input.value = '';
    try {
      const r = await this.deliver('session/steer', { sessionId: this.sessionId, prompt: text, clientMessageId: messageId() });
      if (r.outcome === 'promptRequired') { this.input.value = text; this.notice('No turn is running: send it as a message.'); }
    } catch (e) {
      if (e.code !== undefined) { this.input.value = text; this.notice(e.message); }
    }
  }
  // deliver sends a prompt or steer under its clientMessageId and keeps it
  // until the daemon answers: when the connection drops first, it is sent
  // again after the reconnect (the daemon runs it at most once; one it
  // had taken is answered as a duplicate and its turn shows as it goes).
  async deliver(method, params) {
    const key = params.clientMessageId;
    this.outbox.set(key, { method, params });
    try {
      const r = await app.conn.call(method, params);
      this.outbox.delete(key);
      return r;
    } catch (e) {
      if (e.code !== undefined) this.outbox.delete(key); // the daemon answered
      else this.notice('The connection dropped: it is sent again when the daemon is back (it runs once).');
      throw e;
    }
  }
  // redeliver sends again what a lost connection left unanswered.
  redeliver() {
    for (const { method, params } of [...this.outbox.values()]) {
      this.deliver(method, params).catch((e) => { if (e.code !== undefined) this.notice(e.message); });
    }
  }
  // attach opens (or makes) the session on conn and shows what this page
  // has not seen yet: the whole history the first time, after a
  // reconnect only the events after the last one shown.
  async attach(conn) {
    const params = { keep_siblings: true };
    if (this.sessionId) params.sessionId = this.sessionId;
    else Object.assign(params, { agentAlias: this.fresh.agentAlias, cwd: this.fresh.cwd || undefined, mode: 'code' });
    const s = await conn.call('session/new', params);
    if (!this.sessionId) {
      this.sessionId = s.sessionId;
      app.current = s.sessionId;
      history.replaceState(null, '', '#/s/' + s.sessionId);
      if (this.fresh.model && this.fresh.model !== s.model) {
        try { Object.assign(s, await conn.call('session/configure', { sessionId: s.sessionId, model: this.fresh.model })); } catch (_) { /* shown as it is */ }
      }
    }
    this.started = s;
    this.showQueue(s.queue || []);
    conn.call('session/get', { sessionId: s.sessionId }).then((g) => { this.showAttached(g.attached || []); this.showGoal(g.goal || null); }).catch(() => {});
    this.meta.textContent = s.agentAlias + ' \u00b7 ' + s.cwd;
    this.meta.title = 'agent ' + s.agentAlias + ', working in ' + s.cwd + ', mode ' + s.risk;
    if (s.risk) this.modeSel.value = s.risk;
    await modelOptions(this.model, s.agentAlias, s.model);
    const info = app.sessions.get(s.sessionId);
    if (info) this.setInfo(info); else this.titleEl.textContent = 'Untitled session';
    for (;;) {
      const h = await conn.call('session/history', { sessionId: s.sessionId, sinceSeq: this.seen });
      for (const ev of h.events) this.update(ev);
      if (!h.more || h.events.length === 0) break;
    }
    this.attachedOnce = true;
    this.redeliver();
    if (!this.footer.textContent) this.footer.textContent = (s.model || '') + (s.contextWindow ? ' \u00b7 context ' + s.contextWindow.toLocaleString() + ' tokens' : '');
    renderList();
    if (document.activeElement === document.body) this.input.focus();
  }
  async switchMode() {
    if (!this.sessionId) return;
    try {
      const r = await app.conn.call('session/configure', { sessionId: this.sessionId, risk: this.modeSel.value });
      this.modeSel.value = r.risk;
      const mode = app.riskLevels.find((m) => m.id === r.risk);
      this.footer.textContent = (mode ? mode.name : r.risk) + ' mode from the next tool call';
    } catch (e) { this.notice('Could not switch the mode: ' + e.message); }
  }
  // configured shows the session's settings as a config_update says
  // they are now: the pickers at once, whoever changed them; a change
  // this page did not make is said in the conversation and the footer.
  configured(u) {
    if (u.risk) this.modeSel.value = u.risk;
    if (u.model && this.model.value !== u.model) modelOptions(this.model, (this.started || {}).agentAlias, u.model);
    if (u.by === 'client' && u.clientId === app.clientId) return; // switchMode or configure said it
    const mode = app.riskLevels.find((m) => m.id === u.risk);
    const now = { risk: 'mode \u2192 ' + (mode ? mode.name : u.risk), model: 'model \u2192 ' + u.model, reasoning: 'reasoning \u2192 ' + (u.reasoning || 'the agent\u2019s'),
      sandbox: 'sandbox \u2192 ' + u.sandbox, network: 'network \u2192 ' + (u.network ? 'on' : 'off') };
    const what = (u.changed || []).map((c) => (Object.hasOwn(now, c) ? now[c] : c + ' changed')).join(', ');
    const by = u.by === 'agent' ? 'the plan was approved' : 'by ' + (u.clientName || u.clientId || 'another client');
    this.log.append(el('div', { class: 'turn-note config small muted', text: what + ' (' + by + ')' }));
    if (this.attachedOnce) this.footer.textContent = what + ' (' + by + ')';
    this.scroll();
  }
  async configure() {
    if (!this.sessionId) return;
    try {
      const r = await app.conn.call('session/configure', { sessionId: this.sessionId, model: this.model.value });
      this.footer.textContent = 'model ' + r.model + ' from the next turn';
    } catch (e) { this.notice('Could not change the model: ' + e.message); }
  }
  addFiles(files) {
    for (const f of files) {
      if (f.size > 10 * 1024 * 1024) { this.notice(f.name + ' is larger than 10 MiB: not attached.'); continue; }
      this.files.push(f);
    }
    this.attached.replaceChildren(...this.files.map((f, i) => el('li', {}, el('span', { text: f.name + ' (' + Math.ceil(f.size / 1024) + ' KiB)' }),
      el('button', { type: 'button', class: 'icon', 'aria-label': 'Remove ' + f.name, text: '\u2715', onclick: () => { this.files.splice(i, 1); this.addFiles([]); } }))));
  }
  // upload sends a file in parts of 1 MiB (file/upload) and returns its
  // attachment ({refId}).
  async upload(f) {
    const bytes = new Uint8Array(await f.arrayBuffer());
    let uploadId;
    const part = 1 << 20;
    for (let off = 0; ; off += part) {
      const chunk = bytes.subarray(off, off + part);
      let bin = '';
      for (let i = 0; i < chunk.length; i += 0x8000) bin += String.fromCharCode.apply(null, chunk.subarray(i, i + 0x8000));
      const final = off + part >= bytes.length;
      const r = await app.conn.call('file/upload', { uploadId, dataB64: btoa(bin), final, filename: f.name, mimeType: f.type || 'application/octet-stream' });
      uploadId = r.uploadId;
      if (final) return { refId: r.file.refId, filename: f.name, mimeType: f.type || undefined };
    }
  }
  async submit() {
    const text = this.input.value;
    if ((!text.trim() && this.files.length === 0) || !app.online || !this.sessionId) return;
    const files = this.files;
    this.files = [];
    this.addFiles([]);
    this.input.value = '';
    let sending = false;
    try {
      const attachments = [];
      for (const f of files) attachments.push(await this.upload(f));
      sending = true;
      await this.deliver('session/prompt', { sessionId: this.sessionId, prompt: text, attachments: attachments.length ? attachments : undefined, clientMessageId: messageId() });
    } catch (e) {
      if (!sending) {
        // Not sent (an upload failed): it is the user's again.
        if (!app.online) { this.input.value = text; this.files = files; this.addFiles([]); }
        this.notice(e.message);
      } else if (e.code !== undefined) this.notice(e.message);
    }
  }
  stop() { if (this.sessionId && app.online) app.conn.call('session/cancel', { sessionId: this.sessionId }).catch(() => {}); }
  setRunning(on) {
    this.running = on;
    this.cancel.hidden = !on;
    this.steerBtn.hidden = !on;
    this.send.textContent = on ? 'Queue' : 'Send';
    this.send.title = on ? 'Run it after the turn (it waits in the session\u2019s queue)' : '';
    this.log.setAttribute('aria-busy', String(on));
  }
  scroll() { this.log.scrollTop = this.log.scrollHeight; }
  update(u) {
    if (u.seq && u.seq <= this.seen) return;
    if (u.seq) this.seen = u.seq;
    switch (u.type) {
      case 'user_message':
        this.answer = this.thought = null;
        this.setRunning(true);
        if (!u.steered) this.pruneProcesses();
        {
          const seq = u.seq;
          const mine = !u.clientId || u.clientId === app.clientId;
          const who = mine ? 'You' : (u.clientName || u.clientId);
          const msg = el('div', { class: 'msg user' + (u.steered ? ' steered' : '') + (mine ? '' : ' other'), 'aria-label': (u.steered ? 'Steer from ' : '') + who, 'data-seq': String(seq || '') },
            u.steered || !mine ? el('div', { class: 'msg-from small muted', text: (u.steered ? 'steer' : '') + (u.steered && !mine ? ' from ' : '') + (mine ? '' : who) }) : null,
            markdown(u.text || ''));
          if (u.steered) { this.log.append(msg); break; } // it joins the turn: no turn of its own to undo
          if (seq) msg.append(el('button', { type: 'button', class: 'icon undo needs-online', title: 'Undo from here: the files this turn (and those after it) changed, and the conversation', 'aria-label': 'Undo from this turn', text: '\u21b6', onclick: () => this.undoFrom(seq, msg) }));
          this.log.append(msg);
        }
        break;
      case 'agent_message_chunk': {
        if (!this.answer) {
          this.answer = { text: '', node: el('div', { class: 'msg agent', 'aria-label': 'Agent' }), dirty: false };
          this.log.append(this.answer.node);
        }
        const a = this.answer;
        a.text += u.text || '';
        // One render a frame, whatever the number of chunks.
        if (!a.dirty) { a.dirty = true; requestAnimationFrame(() => { a.dirty = false; a.node.replaceChildren(markdown(a.text)); this.scroll(); }); }
        break;
      }
      case 'agent_thought_chunk': {
        if (!this.thought) {
          this.thought = { text: '', body: el('div', { class: 'thought-text' }), summary: el('summary', { text: 'Thinking\u2026' }) };
          this.log.append(el('details', { class: 'thought' }, this.thought.summary, this.thought.body));
        }
        this.thought.text += u.text || '';
        this.thought.body.textContent = this.thought.text;
        break;
      }
      case 'tool_call': {
        this.endThought();
        this.answer = null;
        const card = this.toolCard(u.toolCallId, u.name, u.rawInput, u.kind);
        if (u.needsApproval) this.toolStatus(card, 'waiting'); // the daemon will ask
        break;
      }
      case 'tool_result': {
        const card = this.toolCard(u.toolCallId, u.name, null);
        card.output.textContent = u.rawOutput === '' ? '(no output)' : u.rawOutput;
        card.output.hidden = false;
        card.output.classList.toggle('error', !!u.isError);
        if (card.status !== 'refused') this.toolStatus(card, u.isError ? 'failed' : 'done');
        break;
      }
      case 'approval_request': this.approval(u); break;
      case 'tool_progress': {
        const card = this.tools.get(u.toolCallId);
        if (!card) break;
        if (!card.progress) { card.progress = el('div', { class: 'tool-progress small muted', role: 'status' }); card.summary.after(card.progress); }
        card.progress.textContent = (typeof u.total === 'number' ? u.progress + ' of ' + u.total : String(u.progress)) + (u.message ? ' \u2014 ' + u.message : '');
        break;
      }
      case 'queue_update': this.showQueue(u.items || []); break;
      case 'goal_update': this.showGoal(u.goal); break;
      case 'config_update': this.configured(u); break;
      case 'approval_reviewed':
        this.log.append(el('div', { class: 'turn-note review small muted', text: 'reviewer ' + u.reviewer + ': ' + u.decision + ' ' + u.toolName + (u.risk ? ' (' + u.risk + ' risk)' : '') + (u.rationale ? ' \u2014 ' + u.rationale : u.error ? ' \u2014 ' + u.error : '') }));
        this.scroll();
        break;
      case 'schedule_update': {
        const r = u.run || {};
        this.log.append(el('div', { class: 'turn-note schedule small muted', text: 'schedule ' + u.scheduleId + ': run ' + r.state + (r.reason ? ' \u2014 ' + r.reason : '') }));
        this.scroll();
        if (!this.schedEl.hidden) this.loadSchedules();
        break;
      }
      case 'turn_resumed': {
        this.log.append(el('div', { class: 'turn-note resumed small muted', text: 'resumed after a restart (attempt ' + u.attempt + ')' }));
        this.scroll();
        break;
      }
      case 'subagent_update': {
        const a = u.subagent || {};
        const line = el('div', { class: 'turn-note subagent small muted' },
          document.createTextNode('sub-agent ' + (a.description || '') + ' (' + (a.agent || '') + ') ' + (a.state === 'running' ? (a.background ? 'started in the background' : 'started') : a.state) + ' \u2014 '),
          el('a', { href: '#/s/' + a.sessionId, text: 'open ' + a.sessionId, onclick: (ev) => { ev.preventDefault(); openSession(a.sessionId); } }));
        this.log.append(line);
        this.scroll();
        break;
      }
      case 'process_update': {
        const p = u.process || {};
        this.showProcess(p);
        const how = p.state === 'running' ? 'started in the background, pid ' + p.pid : p.state + (typeof p.exitCode === 'number' ? ', exit code ' + p.exitCode : p.signal ? ', ' + p.signal : '');
        this.log.append(el('div', { class: 'turn-note process small muted', text: 'process ' + p.id + ' (' + (p.command || '') + ') ' + how }));
        this.scroll();
        break;
      }
      case 'approval_resolved': {
        const a = this.approvals.get(u.requestId);
        if (!a) break;
        this.approvals.delete(u.requestId);
        if (a.plan) {
          a.box.replaceChildren(el('div', { class: 'resolved', text: ({ proceed_ask: 'Proceeding in the ask mode', proceed_accept_edits: 'Proceeding in the accept-edits mode', keep_planning: 'Planning goes on' }[u.decision] || 'Not answered') + (u.by && u.by !== 'client' ? ' (' + u.by + ')' : '') }));
          break;
        }
        const allowed = (u.decision || '').startsWith('allow');
        a.box.replaceChildren(el('div', { class: 'resolved', text: (allowed ? 'Allowed' : 'Refused') + (ANSWER_SCOPE[u.decision] ? ' ' + ANSWER_SCOPE[u.decision] : '') + (u.by && u.by !== 'client' ? ' (' + u.by + ')' : '') +
          (u.by === 'client' && u.clientId && u.clientId !== app.clientId ? ' by ' + (u.clientName || u.clientId) : '') }));
        this.toolStatus(a.card, allowed ? 'running' : 'refused');
        break;
      }
      case 'plan':
        if (u.text) {
          // A plan-mode plan, whole: its approval follows.
          this.log.append(el('div', { class: 'plan card plan-text' }, el('div', { class: 'card-title', text: 'Plan' + (u.path ? ' \u00b7 ' + u.path : '') }), markdown(u.text)));
          this.scroll();
          break;
        }
        this.log.append(el('div', { class: 'plan card' }, el('div', { class: 'card-title', text: 'Plan' }),
          el('ul', {}, (u.entries || []).map((e) => el('li', { class: 'plan-' + e.status }, el('span', { class: 'plan-status', text: e.status }), ' ', e.content)))));
        break;
      case 'context_usage':
        this.footer.textContent = 'context ' + (u.inputTokens || 0).toLocaleString() + (u.maxContextTokens ? ' of ' + u.maxContextTokens.toLocaleString() : '') + ' tokens' +
          (u.cacheReadTokens ? ' (' + u.cacheReadTokens.toLocaleString() + ' cached)' : '') +
          (typeof u.sessionCostUsd === 'number' ? ' \u00b7 ' + costOf({ costUsd: u.sessionCostUsd }) + ' so far' : '');
        break;
      case 'rewind':
        this.log.append(el('div', { class: 'turn-note rewind', text: (u.undo ? 'The last rewind was undone' : 'Rewound to before turn ' + u.turn) +
          ': ' + (u.restored || []).length + ' file(s) restored, ' + (u.removed || []).length + ' removed' + (u.conversation ? '; the conversation too' : '') + (u.recovered ? ' (finished after a restart)' : '') + '.' }));
        break;
      case 'history_trimmed':
        this.log.append(el('div', { class: 'turn-end', text: 'Older turns were summarised out of the model\u2019s view (' + (u.droppedMessages || 0) + ' messages).' }));
        break;
      case 'hook': case 'input_update': case 'turn_interrupted': // EVENTS_LEFT_OUT
        return;
      case 'turn_complete':
        this.endThought();
        this.answer = this.thought = null;
        for (const card of this.tools.values()) if (card.status === 'running' || card.status === 'waiting') this.toolStatus(card, 'stopped');
        this.log.append(el('div', { class: 'turn-end ' + (u.outcome || ''), text: 'turn ' + (u.outcome || 'ended') + (u.error ? ': ' + u.error.message : '') }));
        // Why a turn ended short, when the person can act on it: a budget reached, the reply's token limit.
        if (u.notice) this.log.append(el('div', { class: 'turn-notice', role: 'note', text: u.notice }));
        this.setRunning(false);
        break;
      default:
        break;
    }
    this.scroll();
  }
  endThought() { if (this.thought) { this.thought.summary.textContent = 'Thought'; this.thought = null; } }
  // toolCard finds or makes the card of a tool call.
  toolCard(id, name, input, kind) {
    let card = this.tools.get(id);
    if (!card) {
      const chip = el('span', { class: 'chip' });
      const summary = el('div', { class: 'tool-summary' });
      const inputPre = el('pre', { class: 'tool-input' });
      const output = el('pre', { class: 'tool-output', hidden: true });
      const box = el('div', { class: 'approval-box' });
      const node = el('section', { class: 'tool card', 'data-id': id, 'aria-label': 'Tool ' + name },
        el('div', { class: 'card-title' }, el('span', { class: 'tool-name', text: name }), chip), summary,
        el('details', { class: 'tool-details' }, el('summary', { text: 'Input' }), inputPre), box, output);
      card = { node, chip, summary, inputPre, output, box, name, status: '' };
      this.tools.set(id, card);
      this.log.append(node);
      this.toolStatus(card, 'running');
    }
    if (kind) card.node.dataset.kind = kind;
    if (input) {
      card.input = input;
      card.inputPre.textContent = JSON.stringify(input, null, 2);
      // A command as it would be typed; else the path or pattern the call is about.
      const line = (card.node.dataset.kind === 'execute' && typeof input.command === 'string') ? '$ ' + input.command
        : typeof input.path === 'string' ? input.path : typeof input.pattern === 'string' ? input.pattern : '';
      card.summary.textContent = line;
      card.summary.hidden = !line;
    }
    return card;
  }
  toolStatus(card, status) {
    card.status = status;
    card.chip.textContent = TOOL_STATUS[status];
    card.chip.className = 'chip ' + status;
    card.node.dataset.status = status;
  }
  // approval shows the question once, in its tool's card: the whole
  // command, or the change as a diff, and the answers.
  approval(u) {
    if (u.kind === 'plan') { this.planApproval(u); return; }
    const card = this.toolCard(u.toolCallId || u.requestId, u.toolName, u.rawInput);
    this.toolStatus(card, 'waiting');
    const decide = (decision) => {
      for (const b of card.box.querySelectorAll('button')) b.disabled = true;
      app.conn.call('session/approve', { sessionId: this.sessionId, requestId: u.requestId, decision }).catch((e) => {
        for (const b of card.box.querySelectorAll('button')) b.disabled = false;
        this.notice('The answer did not reach the daemon: ' + e.message);
      });
    };
    const opts = u.options || [];
    const diff = diffView(card.node.dataset.kind, u.rawInput);
    card.box.replaceChildren(...[
      diff,
      !diff && u.summary ? el('div', { class: 'approval-summary', text: u.summary }) : null,
      u.rule && u.rule.includes('permission rule') ? el('div', { class: 'approval-rule small muted', text: 'Asked by ' + u.rule.replace(/^the /, '').replace(/ asks$/, '') }) : null,
      u.review ? el('div', { class: 'approval-review small', text: 'Reviewer: ' + u.review.risk + ' risk \u2014 ' + u.review.rationale }) : null,
      el('div', { class: 'buttons', role: 'group', 'aria-label': 'Approve ' + u.toolName + '?' },
        el('button', { type: 'button', class: 'allow needs-online', text: 'Allow once', title: 'Alt+A', onclick: () => decide('allow_once') }),
        // Each "always" names its scope; only those the request takes.
        ...[['allow_always_input', 'Always this command, this session only', true], ['allow_always', 'Always allow ' + u.toolName + ', this session only'],
          ['allow_project_input', 'Always this command in this project', true], ['allow_project', 'Always allow ' + u.toolName + ' in this project']]
          .filter(([d, , command]) => opts.includes(d) && (!command || card.node.dataset.kind === 'execute'))
          .map(([d, text]) => el('button', { type: 'button', class: 'secondary needs-online always', 'data-decision': d, text, title: ANSWER_SCOPE[d], onclick: () => decide(d) })),
        el('button', { type: 'button', class: 'reject needs-online', text: 'Reject', title: 'Alt+R', onclick: () => decide('reject_once') }))].filter(Boolean));
    card.details = card.node.querySelector('.tool-details');
    if (!diff && card.details) card.details.open = true;
    this.approvals.set(u.requestId, { card, box: card.box, decide });
    refreshOnline();
  }
  // planApproval asks to leave the plan mode with the plan just shown:
  // proceed (in ask or accept-edits), or keep planning with feedback.
  planApproval(u) {
    const feedback = el('textarea', { id: 'plan-feedback-' + u.requestId, class: 'plan-feedback', rows: 2, placeholder: 'What to change (with Keep planning)' });
    const card = el('div', { class: 'plan-approval card', role: 'group', 'aria-label': 'Proceed with this plan?', 'data-request': u.requestId },
      el('div', { class: 'card-title', text: 'Proceed with this plan?' }),
      el('label', { for: feedback.id, class: 'sr-only', text: 'Feedback on the plan' }), feedback);
    const decide = (decision) => {
      for (const b of card.querySelectorAll('button')) b.disabled = true;
      app.conn.call('session/approve', { sessionId: this.sessionId, requestId: u.requestId, decision, feedback: decision === 'keep_planning' ? feedback.value.trim() || undefined : undefined })
        .then(() => { if (decision !== 'keep_planning') this.modeSel.value = decision === 'proceed_ask' ? 'supervised' : 'edits'; })
        .catch((e) => { for (const b of card.querySelectorAll('button')) b.disabled = false; this.notice('The answer did not reach the daemon: ' + e.message); });
    };
    card.append(el('div', { class: 'buttons' },
      el('button', { type: 'button', class: 'allow needs-online plan-proceed-ask', text: 'Proceed (ask)', onclick: () => decide('proceed_ask') }),
      el('button', { type: 'button', class: 'secondary needs-online plan-proceed-edits', text: 'Proceed (accept edits)', onclick: () => decide('proceed_accept_edits') }),
      el('button', { type: 'button', class: 'secondary needs-online plan-keep', text: 'Keep planning', onclick: () => decide('keep_planning') })));
    this.log.append(card);
    this.approvals.set(u.requestId, { plan: true, card, box: card, decide: (d) => decide(d === 'allow_once' ? 'proceed_ask' : 'keep_planning') });
    this.scroll();
    refreshOnline();
  }
  // the oldest approval still waiting
  pending() { return this.approvals.values().next().value || null; }
  // elicitation/create: a form built from the requested schema.
  request(method, params) {
    if (method !== 'elicitation/create') return Promise.reject(new Error('not supported: ' + method));
    if (params.mode === 'url') {
      if (!/^https?:\/\//i.test(params.url || '')) return Promise.resolve({ action: 'decline' }); // a web page, nothing else
      // An MCP server sends the person to a page (opened in a new tab, the
      // page's own key never going there).
      return new Promise((resolve) => {
        const card = el('div', { class: 'elicit card', role: 'group', 'aria-label': 'The agent asks' },
          el('div', { class: 'card-title', text: params.message || 'The agent asks you to open a page' }),
          el('p', {}, el('a', { href: params.url, target: '_blank', rel: 'noopener noreferrer', text: params.url })));
        const done = (action) => { card.replaceWith(el('div', { class: 'resolved', text: action === 'accept' ? 'Done' : 'Declined' })); resolve({ action }); };
        card.append(el('div', { class: 'buttons' }, el('button', { type: 'button', class: 'primary', text: 'Done', onclick: () => done('accept') }),
          el('button', { type: 'button', class: 'secondary', text: 'Decline', onclick: () => done('decline') })));
        this.log.append(card);
        this.scroll();
      });
    }
    return new Promise((resolve) => {
      const schema = params.requestedSchema || {};
      const required = new Set(schema.required || []);
      const form = el('form', { class: 'elicit card' }, el('div', { class: 'card-title', text: params.message || 'The agent asks' }));
      const fields = [];
      let n = 0;
      // The fields in the schema's order (JSON.parse keeps it), each as
      // its type asks: a choice a select (several: checkboxes), a boolean a
      // checkbox, numbers with their bounds; defaults filled in.
      for (const [name, p] of Object.entries(schema.properties || {})) {
        const id = 'q' + Date.now() + '-' + (n++);
        const req = required.has(name);
        const f = formField(name, p, id, req);
        fields.push(f);
        const label = el('label', { for: id, text: (p.title || name) + (req ? ' *' : '') });
        form.append(...(f.multi ? [el('fieldset', { class: 'choices' }, el('legend', { text: label.textContent }), f.input)] : [label, f.input]),
          ...(p.description ? [el('div', { class: 'small muted', text: p.description })] : []));
      }
      const error = el('div', { class: 'form-error', role: 'alert' });
      const done = (action) => {
        let content;
        if (action === 'accept') {
          content = {};
          for (const f of fields) {
            const v = f.value();
            if (v === undefined) continue;
            if (v === null) { error.textContent = (f.p.title || f.name) + ': ' + (f.why || 'required'); return; }
            content[f.name] = v;
          }
        }
        const said = { accept: 'Answered', decline: 'Declined', cancel: 'Cancelled' }[action];
        form.replaceWith(el('div', { class: 'resolved', text: said }));
        resolve(action === 'accept' ? { action, content } : { action });
      };
      form.addEventListener('submit', (ev) => { ev.preventDefault(); done('accept'); });
      form.append(error, el('div', { class: 'buttons' }, el('button', { type: 'submit', class: 'primary', text: 'Answer' }),
        el('button', { type: 'button', class: 'secondary', text: 'Decline', title: 'Say no to the question', onclick: () => done('decline') }),
        el('button', { type: 'button', class: 'secondary', text: 'Cancel', title: 'Dismiss the question without an answer', onclick: () => done('cancel') })));
      this.log.append(form);
      this.scroll();
      const first = form.querySelector('input, select');
      if (first) first.focus();
    });
  }
}

// choicesOf reads an enum (with enumNames), a oneOf/anyOf of consts with
// titles, or an array's items of either, as [value, title] pairs.
function choicesOf(p) {
  if (!p) return null;
  if (Array.isArray(p.enum)) return p.enum.map((v, k) => [String(v), String((p.enumNames && p.enumNames[k]) || v)]);
  const alts = p.oneOf || p.anyOf;
  if (Array.isArray(alts) && alts.every((a) => a && a.const !== undefined)) return alts.map((a) => [String(a.const), String(a.title || a.const)]);
  return null;
}

// formField is one field of a form: its input and how its value is read
// (typed as the schema says; undefined: left out; null: not valid).
function formField(name, p, id, req) {
  const f = { name, p, multi: false };
  const def = p.default;
  const choices = p.type === 'array' ? choicesOf(p.items) : choicesOf(p);
  if (p.type === 'array' && choices) {
    f.multi = true;
    const picked = new Set(Array.isArray(def) ? def.map(String) : []);
    const boxes = choices.map(([v, title], k) => {
      const box = el('input', { type: 'checkbox', value: v, id: id + '-' + k, checked: picked.has(v) });
      return [box, el('label', { for: id + '-' + k, text: title })];
    });
    f.input = el('div', { id, class: 'choice-boxes' }, boxes.map(([b, l]) => el('span', {}, b, ' ', l)));
    f.value = () => {
      const vs = boxes.filter(([b]) => b.checked).map(([b]) => b.value);
      if (p.minItems !== undefined && vs.length < p.minItems) { f.why = 'pick at least ' + p.minItems; return null; }
      if (p.maxItems !== undefined && vs.length > p.maxItems) { f.why = 'pick at most ' + p.maxItems; return null; }
      if (!vs.length && !req) return undefined;
      return vs;
    };
    return f;
  }
  if (choices) {
    const none = def === undefined ? [el('option', { value: '', text: req ? 'Choose…' : '(none)', disabled: req, selected: true })] : [];
    f.input = el('select', { name, id, required: req }, none, choices.map(([v, title]) => el('option', { value: v, text: title, selected: def !== undefined && String(def) === v })));
    f.value = () => (f.input.value === '' ? (req ? null : undefined) : f.input.value);
    return f;
  }
  if (p.type === 'boolean') {
    f.input = el('input', { type: 'checkbox', name, id, checked: def === true });
    f.value = () => f.input.checked;
    return f;
  }
  if (p.type === 'number' || p.type === 'integer') {
    f.input = el('input', { name, id, type: 'number', step: p.type === 'integer' ? '1' : 'any', min: p.minimum, max: p.maximum,
      value: def === undefined ? undefined : String(def), required: req });
    f.value = () => {
      if (f.input.value === '') return req ? null : undefined;
      const v = Number(f.input.value);
      if (!Number.isFinite(v) || (p.type === 'integer' && !Number.isInteger(v))) { f.why = p.type === 'integer' ? 'a whole number' : 'a number'; return null; }
      if (p.minimum !== undefined && v < p.minimum) { f.why = 'at least ' + p.minimum; return null; }
      if (p.maximum !== undefined && v > p.maximum) { f.why = 'at most ' + p.maximum; return null; }
      return v;
    };
    return f;
  }
  const type = { email: 'email', uri: 'url', date: 'date' }[p.format] || 'text';
  f.input = el('input', { name, id, type, minlength: p.minLength, maxlength: p.maxLength, value: def === undefined ? undefined : String(def), required: req });
  f.value = () => {
    if (f.input.value === '') return req ? null : undefined;
    if (!f.input.checkValidity()) { f.why = f.input.validationMessage; return null; }
    return f.input.value;
  };
  return f;
}

// ---- keyboard ----

const SHORTCUTS = [
  ['Alt+N', 'new session'], ['/', 'focus the message box'], ['Esc', 'stop the running turn (or close the list)'],
  ['Alt+S', 'steer the running turn with the message typed'], ['Alt+A', 'allow the waiting tool once'], ['Alt+R', 'reject the waiting tool'], ['Alt+K', 'search sessions'], ['?', 'these shortcuts'],
];

function toggleHelp() {
  let d = document.getElementById('help');
  if (!d) {
    d = el('dialog', { id: 'help', 'aria-label': 'Keyboard shortcuts' }, el('h2', { text: 'Keyboard shortcuts' }),
      el('dl', {}, SHORTCUTS.map(([k, what]) => [el('dt', {}, el('kbd', { text: k })), el('dd', { text: what })])),
      el('form', { method: 'dialog' }, el('button', { class: 'primary', text: 'Close' })));
    document.body.append(d);
  }
  if (d.open) d.close(); else d.showModal();
}

document.addEventListener('keydown', (ev) => {
  if (!app.status) return;
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(ev.target.tagName);
  const v = app.view;
  if (ev.altKey && !ev.ctrlKey && !ev.metaKey) {
    if (ev.code === 'KeyN') { ev.preventDefault(); newSessionPage(); const a = document.getElementById('new-agent'); if (a) a.focus(); return; }
    if (ev.code === 'KeyK') { ev.preventDefault(); drawer(true); const s = document.getElementById('search'); if (s) s.focus(); return; }
    if (ev.code === 'KeyS' && v && v.running) { ev.preventDefault(); v.steer(); return; }
    if ((ev.code === 'KeyA' || ev.code === 'KeyR') && v && v.pending()) {
      ev.preventDefault();
      v.pending().decide(ev.code === 'KeyA' ? 'allow_once' : 'reject_once');
      return;
    }
  }
  if (ev.key === 'Escape') {
    if (document.body.classList.contains('drawer-open')) { drawer(false); return; }
    if (v && v.running) { ev.preventDefault(); v.stop(); }
    return;
  }
  if (typing || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.key === '/' && v) { ev.preventDefault(); v.input.focus(); }
  else if (ev.key === '?') { ev.preventDefault(); toggleHelp(); }
});

boot();
