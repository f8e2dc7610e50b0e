// Drives the dashboard in headless Chromium the way a person would, and
// attacks it the way another local server would. Prints one JSON line
// per request to the Go test ({"step":...}) and reads its answer on
// stdin; the last line is {"result":{...}}.
//
// node dashboard.mjs URL CODE CWD SHOTS_DIR   (TOKEN: a script's token)
import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const [url, code, cwd, shots] = process.argv.slice(2);
const token = process.env.TOKEN;
const gateway = url.replace(/\/$/, '');
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
// ask tells the Go test to do something and waits until it says done.
async function ask(step, extra) {
  console.log(JSON.stringify(Object.assign({ step }, extra || {})));
  const { value } = await lines.next();
  if (value !== 'done') throw new Error('the Go test answered ' + JSON.stringify(value) + ' to ' + step);
}

const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'zc-chromium-')), {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gateway });
const out = { steps: [] };
const errors = [];
let where = 'start';
const step = (name) => { where = name; out.steps.push(name); };
const other = { server: null, cookies: [] };
try {
  const page = browser.pages()[0] || await browser.newPage();
  page.setDefaultTimeout(20000);
  page.on('pageerror', (e) => errors.push(String(e)));
  const apiRequests = [];
  page.on('request', (r) => { if (new URL(r.url()).pathname.startsWith('/api/')) apiRequests.push(r.url()); });
  const wsFrames = []; // what the dashboard's WebSocket received
  const frameWaiters = new Set();
  page.on('websocket', (ws) => ws.on('framereceived', (f) => { wsFrames.push(String(f.payload)); for (const w of frameWaiters) w(); }));
  // frameAfter resolves once a frame received after the from-th matches ok.
  const frameAfter = (from, ok) => new Promise((resolve) => {
    const w = () => { if (wsFrames.slice(from).some(ok)) { frameWaiters.delete(w); resolve(); } };
    frameWaiters.add(w);
    w();
  });
  const text = (sel) => page.$eval(sel, (e) => e.textContent);

  step('login');
  await page.goto(url);
  await page.fill('#code', code);
  await page.click('#login');
  await page.waitForSelector('#new-session');
  out.cookieVisibleToScript = await page.evaluate(() => document.cookie.includes('zc_session'));
  out.keyStored = await page.evaluate(() => (localStorage.getItem('zeroclaw.pageKey') || '').startsWith('zk_'));
  out.agents = await page.$$eval('#new-agent option', (os) => os.map((o) => o.value));
  await page.waitForFunction(() => document.querySelectorAll('#new-model option').length > 0);
  out.models = await page.$$eval('#new-model option', (os) => os.map((o) => o.value));

  step('a session, a command approved with Alt+A');
  await page.fill('#new-cwd', cwd);
  await page.click('#start');
  await page.waitForSelector('#send:not([disabled])');
  await page.waitForFunction(() => location.hash.startsWith('#/s/'));
  out.sessionId = await page.evaluate(() => location.hash.slice(4));
  await page.fill('#prompt', '/tool shell {"command":"echo hi"}');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.tool[data-status="waiting"]');
  out.waitingChip = await text('.tool[data-status="waiting"] .chip');
  out.approvalCommand = await text('.tool .tool-summary');
  out.approvalShownOnce = await page.$$eval('.tool', (ts) => ts.length) === 1 && await page.$$eval('.approval, .approval-request', (a) => a.length) === 0;
  out.approvalButtons = await page.$$eval('.tool[data-status="waiting"] .buttons button', (bs) => bs.map((b) => b.textContent));
  await page.keyboard.press('Alt+A');
  await page.waitForSelector('.tool[data-status="done"]');
  out.doneChip = await text('.tool[data-status="done"] .chip');
  out.toolOutput = await text('.tool .tool-output');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.agent')].some((e) => e.textContent.includes('tool shell returned')));

  step('an edit shown as a diff, refused with Alt+R');
  await page.fill('#prompt', '/tool edit_file {"path":"notes.txt","old":"old line","new":"new line"}');
  await page.click('#send');
  await page.waitForSelector('.tool[data-status="waiting"] .diff');
  out.editCard = await text('.tool[data-status="waiting"]');
  out.diffDel = await text('.tool[data-status="waiting"] .diff-del');
  out.diffAdd = await text('.tool[data-status="waiting"] .diff-add');
  await page.keyboard.press('Alt+R');
  await page.waitForSelector('.tool[data-status="refused"]');
  out.refusedChip = await text('.tool[data-status="refused"] .chip');
  await page.waitForFunction(() => document.querySelectorAll('.turn-end').length >= 2);

  step('code highlighted, with its language and a copy button; markup stays text');
  await page.fill('#prompt', '> a quote of mine\n\nsee `inline code` and:\n```go\nfunc main() { fmt.Println("hi") } // done\n```\nlook <img src=x onerror="window.pwned=1"> **bold** [x](javascript:alert(1))');
  await page.click('#send');
  await page.waitForFunction(() => document.querySelectorAll('.turn-end').length >= 3);
  out.codeLang = await text('.msg.agent .code-block .lang');
  out.codeTokens = await page.$$eval('.msg.agent .code-block .tok', (t) => t.length);
  await page.click('.msg.agent .code-block .copy');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.agent .code-block .copy')].some((b) => b.textContent === 'Copied'));
  out.copied = await page.evaluate(() => navigator.clipboard.readText());
  out.images = await page.evaluate(() => document.querySelectorAll('#log img').length);
  out.pwned = await page.evaluate(() => window.pwned === 1);
  out.bold = await page.evaluate(() => document.querySelectorAll('.msg.agent strong').length);
  out.jsLinks = await page.evaluate(() => [...document.querySelectorAll('#log a')].filter((a) => !/^https?:|^mailto:/.test(a.getAttribute('href'))).length);
  out.liveRegion = await page.$eval('#log', (l) => l.getAttribute('aria-live') + ' ' + l.getAttribute('role'));

  step('Esc stops a running turn');
  await page.fill('#prompt', '/chunks 200\n/delay 100');
  await page.click('#send');
  await page.waitForSelector('#cancel:not([hidden])');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.agent')].pop().textContent.includes('ok ok'));
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => [...document.querySelectorAll('.turn-end')].pop().textContent.includes('cancelled'));

  step('a background process: the panel, its output followed live, Stop');
  await page.fill('#prompt', '/tool shell {"command":"for i in 1 2 3 4 5 6; do echo line-$i; sleep 0.1; done; read -r x; echo never","background":true}');
  await page.click('#send');
  await page.waitForSelector('.tool[data-status="waiting"]');
  await page.click('.tool[data-status="waiting"] button[data-decision="allow_always"]'); // every shell, this session only
  await page.waitForSelector('.tool .resolved:text-matches("this session")');
  out.alwaysResolved = await text('.tool .resolved:text-matches("this session")');
  await page.waitForSelector('#processes .proc[data-state="running"]');
  await page.click('#processes .proc[data-state="running"] .proc-toggle');
  await page.waitForFunction(() => document.querySelector('#processes .proc[data-state="running"] .proc-output').textContent.includes('line-6'));
  out.procOutput = await text('#processes .proc-output');
  await page.click('#processes .proc[data-state="running"] .proc-kill');
  await page.waitForSelector('#processes .proc[data-state="killed"]');
  out.procState = await text('#processes .proc[data-state="killed"] .proc-state');
  out.procStopHidden = await page.$eval('#processes .proc[data-state="killed"] .proc-kill', (b) => b.hidden);
  await page.waitForFunction(() => document.querySelectorAll('.turn-end').length >= 5);

  step('a sub-agent: a note links to its session, which the list nests under this one and which opens');
  const parentId = await page.evaluate(() => location.hash.slice(4));
  await page.fill('#prompt', '/tool task {"description":"a helper","prompt":"hello child"}');
  await page.click('#send');
  await page.waitForFunction(() => document.querySelectorAll('.turn-end').length >= 6);
  await page.waitForSelector('.turn-note.subagent a');
  out.subagentNote = await text('.turn-note.subagent');
  await page.waitForSelector('#sessions li.child');
  out.childListed = await page.$eval('#sessions li.child .title', (e) => e.textContent);
  out.childAfterParent = await page.evaluate((p) => {
    const li = [...document.querySelectorAll('#sessions li')];
    const i = li.findIndex((x) => x.dataset.id === p);
    return i >= 0 && !!li[i + 1] && li[i + 1].classList.contains('child');
  }, parentId);
  await page.click('.turn-note.subagent a');
  await page.waitForFunction(() => document.getElementById('session-title').textContent === 'a helper' && location.hash !== '');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.agent')].some((e) => e.textContent.trim() === 'echo: hello child'));
  out.childOpened = await page.evaluate(() => location.hash.slice(4));
  await page.click('#sessions li[data-id="' + parentId + '"] .session');
  await page.waitForFunction((p) => location.hash === '#/s/' + p, parentId);
  await page.waitForSelector('#send:not([disabled])');
  await page.waitForFunction(() => document.querySelectorAll('.turn-end').length >= 6);

  step('a file attached to a prompt');
  await page.setInputFiles('#file', { name: 'report.md', mimeType: 'text/markdown', buffer: Buffer.from('# a report\n') });
  out.attachedShown = await text('.attached li span');
  await page.fill('#prompt', 'read this');
  await page.click('#send');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.agent')].some((e) => e.textContent.includes('[Document: report.md]')));
  out.attachedAfterSend = await page.$$eval('.attached li', (l) => l.length);

  step('forms: fields in order, typed, with their defaults, bounds checked; several choices; decline and cancel apart');
  const replies = () => page.$$eval('.msg.agent', (ms) => ms.map((m) => m.textContent).filter((t) => t.includes(' returned: ')));
  const asked = async (prompt) => {
    await page.waitForFunction(() => document.querySelector('#cancel').hidden); // the turn before is over
    await page.fill('#prompt', prompt);
    await page.click('#send');
    await page.waitForSelector('form.elicit');
  };
  const answered = async (n) => { await page.waitForFunction((n) => [...document.querySelectorAll('.msg.agent')].filter((m) => m.textContent.includes(' returned: ')).length > n, n); };
  let seen = (await replies()).length;
  await asked('/tool mcp__q__survey {}');
  out.formLabels = await page.$$eval('form.elicit label', (ls) => ls.map((l) => l.textContent));
  out.formValues = await page.$$eval('form.elicit input, form.elicit select', (is) => is.map((i) => (i.type === 'checkbox' ? String(i.checked) : i.value)));
  await page.fill('form.elicit input[name="age"]', '200');
  await page.click('form.elicit button[type="submit"]');
  out.formRefusesOutOfBounds = await page.$$eval('form.elicit input[name="age"]:invalid', (is) => is.length) === 1;
  await page.fill('form.elicit input[name="age"]', '40');
  await page.click('form.elicit button[type="submit"]');
  await answered(seen++);
  await asked('/tool poll {"question":"Which days?","options":["Mon","Tue","Wed"],"multi":true}');
  await page.check('form.elicit .choice-boxes input[value="Mon"]');
  await page.check('form.elicit .choice-boxes input[value="Wed"]');
  await page.click('form.elicit button[type="submit"]');
  await answered(seen++);
  await asked('/tool ask_user {"question":"Go on?"}');
  await page.click('form.elicit button:text-is("Decline")');
  await answered(seen++);
  await asked('/tool ask_user {"question":"Really?"}');
  await page.click('form.elicit button:text-is("Cancel")');
  await answered(seen++);
  out.formReplies = (await replies()).slice(-4);

  step('a turn undone from its prompt, its diff shown first');
  const endsBefore = await page.$$eval('.turn-end', (t) => t.length);
  await page.fill('#prompt', '/tool write_file {"path":"undo-me.txt","content":"to be undone\\n"}');
  await page.click('#send');
  await page.waitForSelector('.tool[data-status="waiting"]');
  await page.keyboard.press('Alt+A');
  await page.waitForFunction((n) => document.querySelectorAll('.turn-end').length > n, endsBefore);
  const lastPrompt = (await page.$$('.msg.user')).pop();
  await lastPrompt.hover();
  await (await lastPrompt.$('button.undo')).click();
  await page.waitForSelector('.undo-panel .diff');
  out.undoDiff = await text('.undo-panel .diff');
  await page.click('.undo-panel button.primary');
  await page.waitForSelector('.turn-note.rewind');
  out.rewindNote = await text('.turn-note.rewind');

  step('the session list is live: another client, rename, search');
  out.title = await page.$eval('#sessions li.current .title', (e) => e.textContent);
  await page.waitForSelector('#sessions li.current .cost');
  out.listCost = await page.$eval('#sessions li.current .cost', (e) => e.textContent);
  out.footer = await text('#footer');
  const sinceLoad = apiRequests.length;
  const made = await fetch(gateway + '/webhook?wait=true', { method: 'POST', headers: { Authorization: 'Bearer ' + token },
    body: JSON.stringify({ prompt: 'made by a **script**', sessionId: 'from-a-script', cwd }) });
  out.webhookStatus = made.status;
  await page.waitForFunction(() => [...document.querySelectorAll('#sessions .title')].some((t) => t.textContent === 'made by a script'));
  out.relativeTime = await page.$eval('#sessions li[data-id="from-a-script"] time', (t) => t.textContent);
  await page.click('#sessions li.current .rename');
  // The list changes while the title is edited (another client's turn
  // in another session): the edit goes on, its input still there.
  const listed = frameAfter(wsFrames.length, (f) => f.includes('"from-a-script"') && f.includes('"idle"'));
  const again = await fetch(gateway + '/webhook?wait=true', { method: 'POST', headers: { Authorization: 'Bearer ' + token },
    body: JSON.stringify({ prompt: 'again', sessionId: 'from-a-script', cwd }) });
  out.webhookAgainStatus = again.status;
  await listed;
  await page.evaluate(() => new Promise((r) => setTimeout(r, 0))); // the page has handled what it received
  out.renameKeptFocus = await page.evaluate(() => document.activeElement && document.activeElement.classList.contains('rename-input'));
  await page.fill('#sessions .rename-input', 'Renamed in the browser');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#session-title').textContent === 'Renamed in the browser');
  await page.waitForFunction(() => document.querySelector('#sessions li.current .title').textContent === 'Renamed in the browser');
  await page.fill('#search', 'script');
  await page.waitForFunction(() => document.querySelectorAll('#sessions li.session-item').length === 1);
  out.searchHit = await page.$eval('#sessions li.session-item .title', (e) => e.textContent);
  await page.fill('#search', '');
  await page.waitForFunction(() => document.querySelectorAll('#sessions li.session-item').length >= 2);
  page.once('dialog', (d) => d.accept());
  await page.click('#sessions li[data-id="from-a-script"] .delete');
  await page.waitForFunction(() => !document.querySelector('#sessions li[data-id="from-a-script"]'));
  out.apiRequestsWhileLive = apiRequests.length - sinceLoad; // the list came over the WebSocket, not by polling

  step('a page on another port of 127.0.0.1 gets the cookie, and it is worth nothing there');
  other.server = createServer((req, res) => {
    other.cookies.push(req.headers.cookie || '');
    res.setHeader('Content-Type', 'text/html');
    res.end('<!doctype html><title>another local server</title><p>hello');
  });
  await new Promise((r) => other.server.listen(0, '127.0.0.1', r));
  const otherURL = 'http://127.0.0.1:' + other.server.address().port + '/';
  const evil = await browser.newPage();
  await evil.goto(otherURL);
  out.otherPortGotCookie = other.cookies.some((c) => c.includes('zc_session='));
  const stolen = other.cookies.find((c) => c.includes('zc_session=')) || '';
  const replay = async (path, method, body) => (await fetch(gateway + path, { method, headers: { Cookie: stolen }, body })).status;
  out.replayStatuses = [await replay('/api/sessions', 'GET'), await replay('/api/status', 'GET'),
    await replay('/webhook?wait=true', 'POST', JSON.stringify({ prompt: 'pwned' }))];
  out.fromOtherOrigin = await evil.evaluate(async (g) => {
    try { return String((await fetch(g + '/api/sessions', { credentials: 'include' })).status); } catch (e) { return 'blocked'; }
  }, gateway);
  await evil.close();
  step('the dashboard keeps working across a reload');
  await page.reload();
  await page.waitForSelector('#send:not([disabled])');
  await page.waitForFunction(() => document.querySelector('#session-title').textContent === 'Renamed in the browser');
  out.afterReload = await page.$$eval('#log .msg.user', (m) => m.length);

  step('the daemon restarts: a banner, sending stops, then it resumes by itself and shows what it missed');
  await ask('stop');
  await page.waitForSelector('#banner:not([hidden])');
  out.banner = await text('#banner');
  out.sendDisabledWhileOffline = await page.$eval('#send', (b) => b.disabled);
  await ask('missed', { sessionId: out.sessionId });
  await page.waitForSelector('#banner', { state: 'hidden', timeout: 30000 });
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.user')].some((e) => e.textContent.includes('while you were away')));
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.agent')].some((e) => e.textContent.includes('echo: while you were away')));
  out.sendEnabledAfter = await page.$eval('#send', (b) => !b.disabled);
  await page.fill('#prompt', 'back again');
  await page.click('#send');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.agent')].some((e) => e.textContent.includes('echo: back again')));

  step('fork the session');
  const before = await page.evaluate(() => location.hash);
  await page.click('#fork');
  await page.waitForFunction((h) => location.hash.startsWith('#/s/') && location.hash !== h, before);
  out.forked = await page.evaluate(() => location.hash.slice(4));
  await page.waitForSelector('.msg.user');

  step('another client on the session: named, its prompt labelled, the queue edited, its turn steered');
  await ask('phone', { sessionId: out.forked });
  await page.waitForFunction(() => document.querySelector('#attached-clients').textContent.includes('phone'));
  out.alsoHere = await text('#attached-clients');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.user.other .msg-from')].some((e) => e.textContent === 'phone'));
  out.otherLabel = await page.$$eval('.msg.user.other:not(.steered) .msg-from', (m) => m.map((e) => e.textContent).join('|'));
  out.ownLabelled = await page.$$eval('.msg.user:not(.other) .msg-from', (m) => m.length);
  await page.waitForFunction(() => document.querySelectorAll('#queue li').length === 2);
  out.queued = await page.$$eval('#queue li .queue-text', (q) => q.map((e) => e.textContent));
  await page.screenshot({ path: join(shots, 'desktop-queue-steer.png') });
  await page.click('#queue li:first-child .queue-remove');
  await page.waitForFunction(() => document.querySelectorAll('#queue li').length === 1);
  await page.click('#queue li .queue-steer');
  await page.waitForSelector('#queue', { state: 'hidden' });
  await page.waitForSelector('#steer:not([hidden])');
  out.sendWhileRunning = await text('#send');
  await page.fill('#prompt', 'steered from the page');
  await page.click('#steer');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.user.steered')].length === 2);
  out.steers = await page.$$eval('.msg.user.steered', (m) => m.map((e) => e.textContent));
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.agent')].some((e) => e.textContent.includes('echo: steered from the page')));
  await ask('phone-done');
  await page.waitForFunction(() => !document.querySelector('#attached-clients').textContent.includes('phone'));

  step('the mode picker switches the session\u2019s mode');
  out.modeOptions = await page.$$eval('#mode option', (os) => os.map((o) => o.value));
  await page.selectOption('#mode', 'edits');
  await page.waitForFunction(() => document.querySelector('#footer').textContent.startsWith('Accept edits mode'));
  await page.selectOption('#mode', 'supervised');
  await page.waitForFunction(() => document.querySelector('#footer').textContent.startsWith('Ask mode'));
  out.modeAfter = await page.$eval('#mode', (s) => s.value);

  step('another client switches the mode: the picker, the conversation and the footer say so at once');
  await ask('other-mode', { sessionId: await page.evaluate(() => app.view.sessionId) });
  await page.waitForFunction(() => document.querySelector('#mode').value === 'full');
  await page.waitForSelector('.turn-note.config');
  out.modeNote = await page.$$eval('.turn-note.config', (n) => n[n.length - 1].textContent);
  out.modeFooter = await text('#footer');
  await page.selectOption('#mode', 'supervised');
  await page.waitForFunction(() => document.querySelector('#footer').textContent.startsWith('Ask mode'));

  step('the plan mode: the plan shown, more planning asked with feedback, then proceed in accept edits');
  await page.selectOption('#mode', 'plan');
  await page.waitForFunction(() => document.querySelector('#footer').textContent.startsWith('Plan mode'));
  await page.fill('#prompt', '/tool exit_plan {"plan":"# The plan\\n1. do it"}');
  await page.click('#send');
  await page.waitForSelector('.plan-text');
  out.planCard = await text('.plan-text');
  await page.waitForSelector('.plan-approval .plan-keep');
  await page.fill('.plan-approval .plan-feedback', 'add a test too');
  await page.click('.plan-approval .plan-keep');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.agent')].some((e) => e.textContent.includes('echo: add a test too')));
  await page.fill('#prompt', '/tool exit_plan {"plan":"# The plan\\n1. do it\\n2. test it"}');
  await page.click('#send');
  await page.waitForFunction(() => document.querySelectorAll('.plan-approval .plan-proceed-edits').length === 1);
  await page.click('.plan-approval .plan-proceed-edits');
  await page.waitForFunction(() => document.querySelector('#mode').value === 'edits');
  out.modeAfterPlan = await page.$eval('#mode', (s) => s.value);
  await page.selectOption('#mode', 'supervised');
  await page.waitForFunction(() => document.querySelector('#footer').textContent.startsWith('Ask mode'));

  step('a goal set from the page: its progress shown, then met; a schedule added, run now, paused, deleted');
  await page.click('#goal-open');
  await page.fill('#goal-objective', '/when "[Goal, turn 2]" /tool goal_done {"summary":"done from the page"}\nsay hi');
  await page.fill('#goal-turns', '5');
  await page.click('#goal-form button[type=submit]');
  await page.waitForSelector('#goal .goal-state');
  await page.waitForFunction(() => document.querySelector('#goal .goal-state').textContent === 'met' && document.querySelector('#goal .goal-spent').textContent.startsWith('2 turns'));
  out.goalSpent = await text('#goal .goal-spent');
  out.goalProgress = await page.$eval('#goal .goal-progress', (p) => p.value);
  await page.click('#schedules-open');
  await page.selectOption('#schedule-kind', 'every');
  await page.fill('#schedule-when', '1h');
  await page.fill('#schedule-prompt', 'scheduled from the page');
  await page.click('#schedule-form button[type=submit]');
  await page.waitForSelector('#schedule-list .sched');
  out.schedWhen = await text('#schedule-list .sched .sched-when');
  await page.click('#schedule-list .sched .sched-run');
  await page.waitForFunction(() => [...document.querySelectorAll('.turn-note.schedule')].some((e) => e.textContent.includes('run completed')));
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.agent')].some((e) => e.textContent.includes('echo: scheduled from the page')));
  await page.click('#schedule-list .sched .sched-toggle');
  await page.waitForFunction(() => document.querySelector('#schedule-list .sched .sched-state').textContent.startsWith('paused'));
  out.schedPaused = true;
  await page.click('#schedule-list .sched .sched-delete');
  await page.waitForFunction(() => !document.querySelector('#schedule-list .sched'));
  await page.click('#schedules-open');
  await page.click('#goal .goal-clear');
  await page.waitForSelector('#goal', { state: 'hidden' });

  step('contrast of the main text colours, light and dark');
  const measure = () => page.evaluate(() => {
    const rgba = (s) => { const m = s.match(/[\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 }; };
    const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
    const over = (top, under) => ({ r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1 });
    const background = (e) => {
      const layers = [];
      for (let n = e; n; n = n.parentElement) { const c = rgba(getComputedStyle(n).backgroundColor); if (c.a > 0) layers.push(c); if (c.a >= 1) break; }
      let c = { r: 255, g: 255, b: 255, a: 1 };
      for (const l of layers.reverse()) c = over(l, c);
      return c;
    };
    const sels = ['body', '#session-title', '.session .title', '.session .meta', '.side-foot', '#search', '.msg.user', '.msg.user code', '.msg.user blockquote',
      '.msg.agent', '.msg.agent code', '.code-block .lang', '.code-block .copy', '.tok-comment', '.tok-keyword', '.tok-string', '.tok-function',
      '.chip.done', '.chip', '.tool-name', '.tool-summary', '.tool-output', '.resolved', '.turn-end', '#prompt', '#send', '#footer', '.meta-line', 'select#model'];
    const res = [];
    for (const s of sels) {
      const e = document.querySelector(s);
      if (!e) { res.push({ sel: s, missing: true }); continue; }
      const fg = rgba(getComputedStyle(e).color), bg = background(e);
      const a = lum(over(fg, bg)) + 0.05, b = lum(bg) + 0.05;
      res.push({ sel: s, ratio: Math.round((Math.max(a, b) / Math.min(a, b)) * 100) / 100 });
    }
    return res;
  });
  await page.emulateMedia({ colorScheme: 'light' });
  out.contrastLight = await measure();
  await page.screenshot({ path: join(shots, 'desktop-light.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  out.contrastDark = await measure();
  await page.screenshot({ path: join(shots, 'desktop-dark.png') });

  step('a phone: the conversation first, the list in a drawer');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ colorScheme: 'light' });
  out.phoneLogTop = await page.$eval('#log', (l) => Math.round(l.getBoundingClientRect().top));
  out.phonePromptVisible = await page.$eval('#prompt', (p) => { const r = p.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; });
  out.phoneListHidden = await page.$eval('#sidebar', (s) => getComputedStyle(s).visibility === 'hidden' || s.getBoundingClientRect().right <= 0);
  await page.screenshot({ path: join(shots, 'phone-light.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: join(shots, 'phone-dark.png') });
  await page.click('#menu');
  await page.waitForFunction(() => { const r = document.querySelector('#sidebar').getBoundingClientRect(); return r.left >= 0 && getComputedStyle(document.querySelector('#sidebar')).visibility === 'visible'; });
  out.phoneDrawerOpens = true;
  await page.screenshot({ path: join(shots, 'phone-dark-drawer.png') });
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.body.classList.contains('drawer-open'));

  step('the shortcuts, listed with ?');
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.click('#log');
  await page.keyboard.press('?');
  await page.waitForSelector('dialog#help[open]');
  out.shortcuts = await page.$$eval('dialog#help dt', (d) => d.map((e) => e.textContent));
  await page.keyboard.press('Escape');
  out.strayText = await page.evaluate(() => ['[object ', 'undefined', 'NaN'].filter((w) => document.body.innerText.includes(w)));

  step('labels on every control');
  out.unlabelled = await page.evaluate(() => [...document.querySelectorAll('button, input, select, textarea')].filter((e) => {
    if (e.type === 'hidden') return false;
    const name = (e.getAttribute('aria-label') || '') + (e.labels && e.labels.length ? 'l' : '') + (e.textContent || '').trim() + (e.getAttribute('title') || '');
    return !name;
  }).map((e) => e.outerHTML.slice(0, 80)));

  // Last, as it fills the conversation with made-up events: one event of
  // every type the Go test gives (EVENTS, one of each of protocol.Events,
  // in its order) goes to the open session's view; each either changes
  // the page or is named in the page's EVENTS_LEFT_OUT (and changes
  // nothing).
  step('every event type shown or left out');
  out.events = await page.evaluate((samples) => {
    const res = [];
    for (const s of samples) {
      const before = document.body.innerHTML;
      let threw = '';
      try { app.view.update(Object.assign({ sessionId: app.view.sessionId }, s)); } catch (e) { threw = String(e); }
      res.push({ type: s.type, shown: document.body.innerHTML !== before, leftOut: EVENTS_LEFT_OUT.includes(s.type), threw });
    }
    return res;
  }, JSON.parse(process.env.EVENTS || '[]'));
} catch (e) {
  out.error = where + ': ' + String(e && e.stack || e);
} finally {
  out.pageErrors = errors;
  if (other.server) other.server.close();
  await browser.close();
}
console.log(JSON.stringify({ result: out }));
process.exit(0);
