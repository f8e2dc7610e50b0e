// Drives the dashboard in headless Chromium the way a person would:
// pair with a code, start a session, ask the agent to run a command,
// approve it in the page, read the output and the answer; then check
// that markup in model output stays text. Prints one JSON line.
//
// node dashboard.mjs URL CODE CWD SCREENSHOT
import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [url, code, cwd, shot] = process.argv.slice(2);
const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'zc-chromium-')), {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const out = {};
const errors = [];
try {
  const page = browser.pages()[0] || await browser.newPage();
  page.setDefaultTimeout(20000);
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.fill('#code', code);
  await page.click('#login');
  await page.waitForSelector('#new');
  out.cookieVisibleToScript = await page.evaluate(() => document.cookie.includes('zc_session'));
  await page.fill('#new-cwd', cwd);
  await page.click('#new');
  await page.waitForSelector('#prompt');
  await page.fill('#prompt', '/tool shell {"command":"echo hi"}');
  await page.click('#send');
  const allow = await page.waitForSelector('.approval button.allow');
  out.approvalInput = await page.textContent('.approval .tool-input');
  await allow.click();
  await page.waitForFunction(() => [...document.querySelectorAll('.tool-output')].some((e) => e.textContent.includes('hi')));
  out.toolOutput = await page.textContent('.tool-output');
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.agent')].some((e) => e.textContent.includes('tool shell returned')));
  out.answer = await page.evaluate(() => [...document.querySelectorAll('.msg.agent')].pop().textContent);
  // Model output is untrusted: markup in it must stay text.
  await page.fill('#prompt', 'look <img src=x onerror="window.pwned=1"> **bold** [x](javascript:alert(1))');
  await page.click('#send');
  await page.waitForFunction(() => document.querySelectorAll('.turn-end').length >= 2);
  out.images = await page.evaluate(() => document.querySelectorAll('#log img').length);
  out.pwned = await page.evaluate(() => window.pwned === 1);
  out.bold = await page.evaluate(() => document.querySelectorAll('.msg.agent strong').length);
  out.jsLinks = await page.evaluate(() => [...document.querySelectorAll('#log a')].filter((a) => !/^https?:|^mailto:/.test(a.getAttribute('href'))).length);
  out.sessions = await page.evaluate(() => document.querySelectorAll('#sessions .session').length);
  await page.screenshot({ path: shot, fullPage: true });
} catch (e) {
  out.error = String(e && e.stack || e);
} finally {
  out.pageErrors = errors;
  await browser.close();
}
console.log(JSON.stringify(out));
