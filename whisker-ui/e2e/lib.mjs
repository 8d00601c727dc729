// Shared helpers of the browser scripts: Debian's Chromium through playwright-core.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function env(name, fallback) {
  const v = process.env[name] ?? fallback;
  if (v === undefined || v === '') fail(`environment variable ${name} is required`);
  return v;
}

export function fail(msg) {
  console.error('FAIL: ' + msg);
  process.exit(1);
}

export async function launch() {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'whisker-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
    viewport: { width: 1440, height: 900 },
  });
  const problems = [];
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    const t = m.text();
    if (/Content Security Policy|Refused to/i.test(t)) problems.push('CSP violation: ' + t);
  });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  const close = async () => {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return { page, problems, close };
}

/** Polls fn in the page until it returns a truthy value or the timeout passes. */
export async function waitFor(page, what, fn, arg, timeoutMs = 20000) {
  try {
    return await (await page.waitForFunction(fn, arg, { timeout: timeoutMs, polling: 100 })).jsonValue();
  } catch {
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}
