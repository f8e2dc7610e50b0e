// Markdown and code, rendered to DOM nodes for the zeroclaw dashboard.
// Everything is built with createElement and textContent, never
// innerHTML: model output is untrusted, and text set this way cannot
// become markup, so nothing needs sanitizing. Code is coloured from
// Prism's token tree (Prism.tokenize), never from its HTML.
'use strict';

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'text') e.textContent = v;
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

// ---- code ----

const LANG_ALIASES = { js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'javascript', ts: 'typescript', tsx: 'typescript',
  sh: 'bash', shell: 'bash', zsh: 'bash', console: 'bash', py: 'python', golang: 'go', rs: 'rust', 'c++': 'cpp', cc: 'cpp', h: 'c',
  yml: 'yaml', md: 'markdown', html: 'markup', xml: 'markup', svg: 'markup', dockerfile: 'docker', patch: 'diff' };

function grammar(lang) {
  if (!lang || !window.Prism) return null;
  const name = LANG_ALIASES[lang.toLowerCase()] || lang.toLowerCase();
  return window.Prism.languages[name] || null;
}

// tokens appends Prism's token tree under parent as spans of text.
function tokens(parent, stream) {
  for (const t of stream) {
    if (typeof t === 'string') { parent.append(t); continue; }
    const kinds = ['tok', 'tok-' + t.type];
    if (t.alias) kinds.push(...[].concat(t.alias).map((a) => 'tok-' + a));
    const span = el('span', { class: kinds.join(' ') });
    if (typeof t.content === 'string') span.textContent = t.content;
    else tokens(span, [].concat(t.content));
    parent.append(span);
  }
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch (_) {
    const ta = el('textarea', { class: 'sr-only', 'aria-hidden': 'true' });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    const ok = document.execCommand('copy');
    ta.remove();
    return ok;
  }
}

// codeBlock is a block of code with its language named and a copy
// button; coloured when the language is one Prism knows.
function codeBlock(text, lang) {
  const code = el('code');
  const g = grammar(lang);
  if (g) {
    try { tokens(code, window.Prism.tokenize(text, g)); } catch (_) { code.textContent = text; }
  } else code.textContent = text;
  const copy = el('button', { type: 'button', class: 'copy', text: 'Copy', 'aria-label': 'Copy the ' + (lang || 'code') + ' block' });
  copy.addEventListener('click', async () => {
    const ok = await copyText(text);
    copy.textContent = ok ? 'Copied' : 'Copy failed';
    setTimeout(() => { copy.textContent = 'Copy'; }, 1500);
  });
  return el('figure', { class: 'code-block' },
    el('figcaption', {}, el('span', { class: 'lang', text: lang || 'text' }), copy),
    el('pre', { class: 'code', 'data-lang': lang || null, tabindex: '0' }, code));
}

// ---- Markdown (a safe subset) ----

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

const BLOCK_START = /^\s*(```|~~~|#{1,6}\s|[-*+]\s|\d+[.)]\s|>)/;

function markdown(src) {
  const root = el('div', { class: 'md' });
  const lines = src.replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if ((m = /^\s*(```+|~~~+)\s*([\w+#.-]*)/.exec(line))) {
      const fence = m[1], lang = m[2];
      const code = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) code.push(lines[i++]);
      i++;
      root.append(codeBlock(code.join('\n'), lang));
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
      while (i < lines.length && lines[i].trim() !== '' && !BLOCK_START.test(lines[i])) para.push(lines[i++]);
      if (para.length === 0) para.push(lines[i++]);
      const p = el('p');
      para.forEach((t, k) => { if (k) p.append(el('br')); p.append(...inline(t)); });
      root.append(p);
    }
  }
  return root;
}

// ---- diffs for approvals ----

// diffView shows what an edit would change, line by line: removed
// lines, then added ones, for a call of kind edit that replaces one
// exact text with another (old, new) or writes a whole file (content).
function diffView(kind, input) {
  let old = null, neu = null;
  if (kind !== 'edit' || !input) return null;
  if (typeof input.old === 'string') { old = input.old; neu = typeof input.new === 'string' ? input.new : ''; }
  else if (typeof input.content === 'string') { neu = input.content; }
  if (neu === null) return null;
  const pre = el('pre', { class: 'diff', 'aria-label': 'Proposed change to ' + (input.path || 'the file') });
  const add = (cls, sign, text) => pre.append(el('span', { class: cls, text: sign + text }), '\n');
  if (old !== null) for (const l of old.split('\n')) add('diff-del', '- ', l);
  for (const l of neu.split('\n')) add('diff-add', '+ ', l);
  return el('div', { class: 'diff-wrap' }, el('div', { class: 'diff-path', text: (old === null ? 'write ' : 'edit ') + (input.path || '') }), pre);
}
