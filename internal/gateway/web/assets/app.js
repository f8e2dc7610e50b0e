// The zeroclaw dashboard: plain JavaScript, no build step. Everything the
// page shows is built with createElement and textContent, never innerHTML:
// model output, tool output and session titles are untrusted, and text
// set this way cannot become markup, so nothing needs sanitizing.
'use strict';

const $app = document.getElementById('app');

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'text') e.textContent = v;
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat()) {
    if (k === null || k === undefined || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

async function api(path, opts) {
  const r = await fetch(path, Object.assign({ credentials: 'same-origin', headers: { 'Content-Type': 'application/json' } }, opts));
  let body = null;
  try { body = await r.json(); } catch (_) { /* no body */ }
  if (!r.ok) {
    const err = new Error((body && body.error && body.error.message) || r.statusText);
    err.status = r.status;
    throw err;
  }
  return body;
}

// ---- Markdown, rendered to DOM nodes (a safe subset) ----

function inline(text) {
  const out = [];
  // code spans, links, bold, italics, in that order of precedence
  const re = /(`+)([\s\S]*?)\1|\[([^\]\n]+)\]\(([^)\s]+)\)|\*\*([^*\n]+)\*\*|__([^_\n]+)__|\*([^*\n]+)\*|_([^_\n]+)_/g;
  let last = 0, m;
  while ((m = re.exec(text)) !== null) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1]) out.push(el('code', { text: m[2] }));
    else if (m[3] !== undefined) {
      const href = m[4];
      if (/^(https?:|mailto:)/i.test(href)) out.push(el('a', { href, rel: 'noopener noreferrer nofollow', target: '_blank' }, inline(m[3])));
      else out.push(m[0]); // any other scheme stays text
    } else if (m[5] !== undefined || m[6] !== undefined) out.push(el('strong', {}, inline(m[5] || m[6])));
    else out.push(el('em', {}, inline(m[7] || m[8])));
    last = re.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function markdown(src) {
  const root = el('div', { class: 'md' });
  const lines = src.replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if ((m = /^\s*(```+|~~~+)\s*([\w+-]*)/.exec(line))) {
      const fence = m[1], lang = m[2];
      const code = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) code.push(lines[i++]);
      i++;
      root.append(el('pre', { class: 'code', 'data-lang': lang || null }, el('code', { text: code.join('\n') })));
    } else if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
      root.append(el('h' + Math.min(m[1].length + 2, 6), {}, inline(m[2])));
      i++;
    } else if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = el(ordered ? 'ol' : 'ul');
      while (i < lines.length && (m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]))) {
        list.append(el('li', {}, inline(m[2])));
        i++;
      }
      root.append(list);
    } else if (/^\s*>/.test(line)) {
      const quote = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quote.push(lines[i++].replace(/^\s*>\s?/, ''));
      root.append(el('blockquote', {}, markdown(quote.join('\n'))));
    } else if (line.trim() === '') {
      i++;
    } else {
      const para = [];
      while (i < lines.length && lines[i].trim() !== '' && !/^\s*(```|~~~|#{1,6}\s|[-*+]\s|\d+[.)]\s|>)/.test(lines[i])) para.push(lines[i++]);
      if (para.length === 0) para.push(lines[i++]);
      const p = el('p');
      para.forEach((t, k) => { if (k) p.append(el('br')); p.append(...inline(t)); });
      root.append(p);
    }
  }
  return root;
}

// ---- the WebSocket client of the socket protocol ----

class Daemon {
  constructor(onUpdate, onRequest, onClose) {
    this.next = 1;
    this.pending = new Map();
    this.onUpdate = onUpdate;
    this.onRequest = onRequest;
    this.onClose = onClose;
  }
  open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws');
      this.ws = ws;
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error('the WebSocket did not open'));
      ws.onclose = (e) => {
        for (const p of this.pending.values()) p.reject(new Error('connection closed'));
        this.pending.clear();
        if (this.onClose) this.onClose(e);
      };
      ws.onmessage = (e) => this.message(JSON.parse(e.data));
    });
  }
  message(m) {
    if (m.method === 'session/update') { this.onUpdate(m.params); return; }
    if (m.method && m.id !== undefined) {
      Promise.resolve(this.onRequest(m.method, m.params)).then(
        (result) => this.send({ jsonrpc: '2.0', id: m.id, result }),
        (err) => this.send({ jsonrpc: '2.0', id: m.id, error: { code: -32603, message: String(err.message || err) } }));
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.error) { const e = new Error(m.error.message); e.code = m.error.code; p.reject(e); } else p.resolve(m.result);
  }
  send(obj) { this.ws.send(JSON.stringify(obj)); }
  call(method, params) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ jsonrpc: '2.0', id, method, params: params || {} });
    });
  }
  close() { if (this.ws) this.ws.close(); }
}

// ---- the app ----

const state = { sessions: [], current: null, daemon: null, view: null, lastSeq: 0, poll: null };

async function boot() {
  try {
    const st = await api('/api/status');
    main(st);
  } catch (e) {
    if (e.status === 401) login();
    else $app.replaceChildren(el('p', { class: 'error', text: 'The gateway did not answer: ' + e.message }));
  }
}

function login(message) {
  const code = el('input', { id: 'code', name: 'code', placeholder: 'ABCDE-FGHIJ', autocomplete: 'off', autofocus: true, spellcheck: 'false' });
  const msg = el('p', { class: 'error', text: message || '' });
  const form = el('form', { class: 'login', onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      await api('/pair', { method: 'POST', body: JSON.stringify({ code: code.value, name: 'dashboard (' + navigator.userAgent.split(' ').pop() + ')', cookie: true }) });
      boot();
    } catch (e) { msg.textContent = e.message; }
  } },
  el('h1', { text: 'zeroclaw' }),
  el('p', { text: 'Enter a pairing code. Get one on the daemon\u2019s machine with:' }),
  el('pre', { text: 'zeroclaw gateway pair' }),
  code, el('button', { type: 'submit', id: 'login', text: 'Pair this browser' }), msg);
  $app.replaceChildren(form);
  code.focus();
}

function main(status) {
  const list = el('ul', { id: 'sessions' });
  const newAgent = el('input', { id: 'new-agent', value: 'default', title: 'agent alias' });
  const newCwd = el('input', { id: 'new-cwd', placeholder: 'working directory (absolute; empty: the daemon\u2019s)' });
  const side = el('aside', {},
    el('header', {}, el('h1', { text: 'zeroclaw' }), el('span', { class: 'muted', text: status.serverVersion + ' \u00b7 ' + status.provider })),
    el('form', { id: 'new-session', onsubmit: (ev) => { ev.preventDefault(); openSession(null, newAgent.value, newCwd.value); } },
      el('h2', { text: 'New session' }), newAgent, newCwd, el('button', { type: 'submit', id: 'new', text: 'Start' })),
    el('h2', { text: 'Sessions' }), list,
    el('button', { class: 'link', text: 'Log out', onclick: async () => { await api('/logout', { method: 'POST' }); location.reload(); } }));
  const view = el('main', { id: 'view' }, el('p', { class: 'muted', text: 'Pick a session, or start one.' }));
  state.view = view;
  $app.replaceChildren(el('div', { class: 'layout' }, side, view));
  refreshSessions();
  clearInterval(state.poll);
  state.poll = setInterval(refreshSessions, 3000);
}

async function refreshSessions() {
  let res, st;
  try {
    [res, st] = await Promise.all([api('/api/sessions?limit=100'), api('/api/status')]);
  } catch (e) { if (e.status === 401) { clearInterval(state.poll); login('Your pairing was revoked.'); } return; }
  const clients = new Map((st.sessions || []).map((x) => [x.sessionId, x.clients]));
  const list = document.getElementById('sessions');
  if (!list) return;
  list.replaceChildren(...res.sessions.map((s) => el('li', { class: s.sessionId === state.current ? 'current' : '' },
    el('button', { class: 'session', 'data-id': s.sessionId, onclick: () => openSession(s.sessionId) },
      el('span', { class: 'title', text: s.title || s.sessionId }),
      el('span', { class: 'state ' + s.state, text: s.state + (clients.has(s.sessionId) ? ' \u00b7 ' + clients.get(s.sessionId) + ' client(s) attached' : '') }),
      el('span', { class: 'muted small', text: s.agentAlias + ' \u00b7 ' + s.cwd })))));
}

async function openSession(id, agentAlias, cwd) {
  if (state.daemon) state.daemon.close();
  const log = el('div', { id: 'log' });
  const footer = el('div', { id: 'footer', class: 'muted small' });
  const input = el('textarea', { id: 'prompt', rows: 3, placeholder: 'Message the agent (Enter sends, Shift+Enter for a new line)' });
  const send = el('button', { id: 'send', text: 'Send' });
  const cancel = el('button', { id: 'cancel', class: 'secondary', text: 'Cancel turn' });
  const title = el('h2', { id: 'session-title', text: id || 'new session' });
  state.view.replaceChildren(title, log, el('div', { class: 'composer' }, input, el('div', { class: 'buttons' }, send, cancel)), footer);
  const view = new SessionView(log, footer);
  const d = new Daemon((u) => view.update(u), (m, p) => view.request(m, p, d), (e) => {
    if (state.daemon === d) footer.textContent = 'disconnected (' + (e.reason || e.code) + ')';
  });
  state.daemon = d;
  try {
    await d.open();
    await d.call('initialize', { protocolVersion: 1, clientInfo: { name: 'zeroclaw-dashboard', version: '1' },
      clientCapabilities: { elicitation: { form: {} }, maxFrameBytes: 16777216 } });
    const params = { keep_siblings: true };
    if (id) params.sessionId = id;
    if (agentAlias) params.agentAlias = agentAlias;
    if (cwd) params.cwd = cwd;
    const s = await d.call('session/new', params);
    state.current = s.sessionId;
    title.textContent = s.sessionId;
    view.sessionId = s.sessionId;
    // The stored history, page by page, then the live events (dropping
    // any the history already had).
    let since = 0;
    for (;;) {
      const h = await d.call('session/history', { sessionId: s.sessionId, sinceSeq: since });
      for (const ev of h.events) { view.update(ev); since = ev.seq; }
      if (!h.more || h.events.length === 0) break;
    }
    footer.textContent = s.agentAlias + ' \u00b7 ' + s.cwd;
    refreshSessions();
  } catch (e) {
    log.append(el('p', { class: 'error', text: 'Could not open the session: ' + e.message }));
    return;
  }
  const submit = async () => {
    const text = input.value;
    if (!text.trim()) return;
    input.value = '';
    try {
      await d.call('session/prompt', { sessionId: view.sessionId, prompt: text });
    } catch (e) { log.append(el('p', { class: 'error', text: e.message })); }
    refreshSessions();
  };
  send.addEventListener('click', submit);
  input.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); submit(); } });
  cancel.addEventListener('click', () => d.call('session/cancel', { sessionId: view.sessionId }).catch(() => {}));
  input.focus();
}

class SessionView {
  constructor(log, footer) {
    this.log = log;
    this.footer = footer;
    this.seen = 0;
    this.answer = null; // the assistant message being streamed
    this.thought = null;
    this.tools = new Map();
    this.approvals = new Map();
  }
  scroll() { this.log.scrollTop = this.log.scrollHeight; }
  update(u) {
    if (u.seq && u.seq <= this.seen) return;
    if (u.seq) this.seen = u.seq;
    switch (u.type) {
      case 'user_message':
        this.answer = this.thought = null;
        this.log.append(el('div', { class: 'msg user' }, markdown(u.text || '')));
        break;
      case 'agent_message_chunk': {
        if (!this.answer) {
          this.answer = { text: '', node: el('div', { class: 'msg agent' }) };
          this.log.append(this.answer.node);
        }
        this.answer.text += u.text || '';
        this.answer.node.replaceChildren(markdown(this.answer.text));
        break;
      }
      case 'agent_thought_chunk': {
        if (!this.thought) {
          this.thought = { text: '', body: el('div', { class: 'thought-text' }) };
          this.log.append(el('details', { class: 'thought' }, el('summary', { text: 'Thinking' }), this.thought.body));
        }
        this.thought.text += u.text || '';
        this.thought.body.textContent = this.thought.text;
        break;
      }
      case 'tool_call': {
        this.answer = this.thought = null;
        const out = el('pre', { class: 'tool-output', text: 'running\u2026' });
        const node = el('div', { class: 'tool', 'data-id': u.toolCallId },
          el('div', { class: 'tool-name', text: '\u2699 ' + u.name }),
          el('pre', { class: 'tool-input', text: JSON.stringify(u.rawInput, null, 2) }), out);
        this.tools.set(u.toolCallId, out);
        this.log.append(node);
        break;
      }
      case 'tool_result': {
        const out = this.tools.get(u.toolCallId);
        if (out) {
          out.textContent = u.rawOutput === '' ? '(no output)' : u.rawOutput;
          out.classList.toggle('error', !!u.isError);
        }
        break;
      }
      case 'approval_request': {
        const decide = (decision) => state.daemon.call('session/approve', { sessionId: this.sessionId, requestId: u.requestId, decision }).catch(() => {});
        const buttons = el('div', { class: 'buttons' },
          el('button', { class: 'allow', text: 'Allow once', onclick: () => decide('allow_once') }),
          el('button', { class: 'secondary', text: 'Always allow ' + u.toolName, onclick: () => decide('allow_always') }),
          el('button', { class: 'reject', text: 'Reject', onclick: () => decide('reject_once') }));
        const node = el('div', { class: 'approval', 'data-request': u.requestId },
          el('div', { class: 'approval-title', text: 'Approve ' + u.toolName + '?' }),
          el('div', { text: u.summary || '' }),
          el('pre', { class: 'tool-input', text: JSON.stringify(u.rawInput, null, 2) }), buttons);
        this.approvals.set(u.requestId, node);
        this.log.append(node);
        break;
      }
      case 'approval_resolved': {
        const node = this.approvals.get(u.requestId);
        if (node) {
          const b = node.querySelector('.buttons');
          if (b) b.replaceWith(el('div', { class: 'resolved', text: (u.decision || '').replace('_', ' ') + (u.by ? ' (' + u.by + ')' : '') }));
        }
        break;
      }
      case 'plan':
        this.log.append(el('div', { class: 'plan' }, el('div', { class: 'tool-name', text: 'Plan' }),
          el('ul', {}, (u.entries || []).map((e) => el('li', { class: 'plan-' + e.status, text: e.content + ' \u2014 ' + e.status })))));
        break;
      case 'context_usage':
        this.footer.textContent = 'context: ' + u.inputTokens + (u.maxContextTokens ? ' / ' + u.maxContextTokens : '') + ' tokens';
        break;
      case 'turn_complete':
        this.answer = this.thought = null;
        this.log.append(el('div', { class: 'turn-end ' + (u.outcome || ''), text: 'turn ' + (u.outcome || 'ended') + (u.error ? ': ' + u.error.message : '') }));
        break;
      default:
        break;
    }
    this.scroll();
  }
  // elicitation/create: a form built from the requested schema.
  request(method, params) {
    if (method !== 'elicitation/create') return Promise.reject(new Error('not supported: ' + method));
    return new Promise((resolve) => {
      const props = (params.requestedSchema && params.requestedSchema.properties) || {};
      const fields = [];
      const form = el('form', { class: 'elicit' }, el('div', { class: 'approval-title', text: params.message || 'The agent asks' }));
      for (const [name, p] of Object.entries(props)) {
        let input;
        if (p.enum) input = el('select', { name }, p.enum.map((v, k) => el('option', { value: v, text: (p.enumNames && p.enumNames[k]) || v })));
        else if (p.type === 'boolean') input = el('input', { type: 'checkbox', name });
        else input = el('input', { name, type: p.type === 'number' || p.type === 'integer' ? 'number' : 'text' });
        fields.push([name, p, input]);
        form.append(el('label', {}, el('span', { text: p.title || p.description || name }), input));
      }
      const done = (action) => {
        const content = {};
        if (action === 'accept') {
          for (const [name, p, input] of fields) {
            if (p.type === 'boolean') content[name] = input.checked;
            else if (p.type === 'number' || p.type === 'integer') content[name] = Number(input.value);
            else content[name] = input.value;
          }
        }
        form.replaceWith(el('div', { class: 'resolved', text: action === 'accept' ? 'answered' : 'declined' }));
        resolve(action === 'accept' ? { action, content } : { action });
      };
      form.addEventListener('submit', (ev) => { ev.preventDefault(); done('accept'); });
      form.append(el('div', { class: 'buttons' }, el('button', { type: 'submit', text: 'Answer' }),
        el('button', { type: 'button', class: 'secondary', text: 'Decline', onclick: () => done('decline') })));
      this.log.append(form);
      this.scroll();
    });
  }
}

boot();
