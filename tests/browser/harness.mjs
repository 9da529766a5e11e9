// What the browser tests share: tools/serve.py on a free port, and Debian's
// headless Chromium driven by playwright-core.
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import {mkdtempSync} from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

// Starts serve.py on `siteDir` (`options`: more of its flags); resolves to
// {server, url} once it listens. Kill `server` when done.
export async function serve(servePy, siteDir, ...options) {
  const server = spawn('/usr/bin/python3', [servePy, siteDir, '--port', '0', '--quiet', ...options],
                       {stdio: ['ignore', 'pipe', 'inherit']});
  const lines = readline.createInterface({input: server.stdout});
  const {value: firstLine} = await lines[Symbol.asyncIterator]().next();
  const url = /http:\/\/\S+/.exec(firstLine ?? '')?.[0];
  if (!url) server.kill();
  assert.ok(url, `serve.py printed no URL: ${firstLine}`);
  return {server, url};
}

// A persistent Chromium context with a fresh profile below `tmp` (Playwright
// rejects --user-data-dir in args: it takes the profile folder here);
// `extraArgs`: more Chromium flags (embed_bench.mjs's experiments).
export function launchChromium(chromium, tmp, extraArgs = []) {
  const profile = mkdtempSync(path.join(tmp, 'chromium-'));
  return chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: {width: 1280, height: 900},
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync',
           ...extraArgs],
  });
}
