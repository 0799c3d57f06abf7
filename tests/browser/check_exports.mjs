// Loads `mprof export` files of the real samples in speedscope (from the npm
// registry) in headless chromium, and asserts on what the page shows: the
// profile name and count in the toolbar, the frames the Sandwich view lists,
// and a screenshot with drawn content. speedscope also imports the Trace
// Event Format, so the perfetto/chrome export is parsed there too.
//
// Usage: node check_exports.mjs MPROF SAMPLES_DIR OUT_DIR
// The expectations come from `mprof summary --json` and `mprof info`, not
// from the exported files.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const [mprof, samples, outDir] = process.argv.slice(2);
if (!mprof || !samples || !outDir) {
  console.error('usage: node check_exports.mjs MPROF SAMPLES_DIR OUT_DIR');
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const speedscopeRoot = path.join(here, 'node_modules/speedscope/dist/release');
const chromiumPath = process.env.MPROF_CHROMIUM || '/usr/bin/chromium';
fs.mkdirSync(outDir, { recursive: true });

let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    console.log(`FAIL: ${what}`);
  }
}

function run(...args) {
  return execFileSync(mprof, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
}

// Serve speedscope's release build and the exported files over HTTP:
// speedscope loads a profile from #profileURL=..., which file:// forbids.
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
  '.json': 'application/json', '.wasm': 'application/wasm', '.png': 'image/png' };
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  const name = decodeURIComponent(url.pathname);
  const file = name.startsWith('/files/')
    ? path.join(outDir, path.basename(name))
    : path.join(speedscopeRoot, path.normalize(name === '/' ? '/index.html' : name));
  fs.readFile(file, (err, data) => {
    if (err) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream' });
    res.end(data);
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;

const browser = await chromium.launch({
  executablePath: chromiumPath,
  // As root in a container chromium needs --no-sandbox; speedscope draws
  // with WebGL, which headless chromium renders in software (SwiftShader).
  args: ['--no-sandbox', '--enable-unsafe-swiftshader', '--use-angle=swiftshader'],
});

// Open FILE in speedscope; returns the page once the toolbar names a profile.
async function open(file) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  const url = `${base}/files/${path.basename(file)}`;
  await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(url)}`);
  const title = `${path.basename(file)} - speedscope`;
  try {
    await page.waitForFunction(
      (t) => document.title !== 'speedscope' && document.body.innerText.includes('Sandwich') &&
        document.querySelector('canvas') !== null && document.title.length > 0 && t.length > 0,
      title, { timeout: 30000 });
  } catch (e) {
    errors.push(`speedscope did not show ${file}: ${e.message}`);
  }
  return { page, errors };
}

// The profile name shown in the toolbar, and "(i/n)" when there are several.
async function toolbar(page) {
  const text = await page.evaluate(() => document.body.innerText);
  const line = text.split('\n').find((l) => /\(GPU \d+\)|\(pid \d+\)|\(\d+\/\d+\)$/.test(l)) || '';
  const m = line.match(/^(.*?)(?: \((\d+)\/(\d+)\))?$/);
  return { name: m ? m[1] : '', index: m && m[2] ? +m[2] : 1, count: m && m[3] ? +m[3] : 1 };
}

// The symbol names the Sandwich view lists, scrolling through its table.
async function sandwichRows(page) {
  await page.getByText('Sandwich', { exact: false }).first().click();
  await page.waitForFunction(() => document.body.innerText.includes('Symbol Name'), null, { timeout: 10000 });
  // The rows come after the header; on a loaded machine, frames later.
  await page.waitForFunction(() => /[\d.,]+\w* \([^)\n]*\)\n\t/.test(document.body.innerText), null,
    { timeout: 30000 });
  const names = new Map();
  for (let step = 0; step < 200; step++) {
    const got = await page.evaluate(() => {
      // The table is the scrollable element that holds the symbol rows.
      const scrollers = [...document.querySelectorAll('div')].filter(
        (d) => d.scrollHeight > d.clientHeight + 4 && getComputedStyle(d).overflowY !== 'visible');
      const text = document.body.innerText;
      const el = scrollers.sort((a, b) => b.scrollHeight - a.scrollHeight)[0];
      let more = false;
      if (el) {
        const before = el.scrollTop;
        el.scrollTop = before + el.clientHeight * 0.8;
        more = el.scrollTop > before;
      }
      return { text, more };
    });
    // Rows read "TOTAL (PCT)\n\tSELF (PCT)\n\tNAME".
    const lines = got.text.split('\n');
    for (let i = 0; i + 2 < lines.length; i++) {
      const total = lines[i].match(/^([\d.,]+\w*) \(/);
      if (total && /^\t/.test(lines[i + 1]) && /^\t/.test(lines[i + 2]))
        names.set(lines[i + 2].trim(), lines[i]);
    }
    if (!got.more) break;
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  }
  return names;
}

// Share of pixels of the flame chart area that are not background, and
// how many colours it holds: a blank or failed WebGL canvas has ~1.
async function screenshotStats(page, file) {
  const png = await page.screenshot({ path: file });
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const { data } = g.getImageData(0, 40, img.width, img.height - 40);
    const colours = new Set();
    let ink = 0;
    for (let i = 0; i < data.length; i += 4) {
      const rgb = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
      colours.add(rgb);
      if (rgb !== 0xffffff) ink++;
    }
    return { colours: colours.size, ink: ink / (data.length / 4) };
  }, png.toString('base64'));
}

const traces = fs.readdirSync(samples).filter((f) => f.endsWith('.mprof')).sort();
for (const trace of traces) {
  const name = path.basename(trace, '.mprof');
  const tracePath = path.join(samples, trace);
  const summary = JSON.parse(run('summary', tracePath, '--json', '--all', '--hot', '1'));
  const kernels = summary.kernels.items;
  const sampled = kernels.filter((k) => k.samples > 0);

  // speedscope: one profile per sampled kernel, dominant first. A trace
  // without PC samples (PM sampling only) has no profile: the export is
  // refused in one line, exit 2, and the trace goes to Perfetto alone.
  const ss = path.join(outDir, `${name}.speedscope.json`);
  let page, errors;
  let rows = new Map();
  if (sampled.length === 0) {
    let refused = null;
    try {
      run('export', tracePath, '--format', 'speedscope', '-q', '-o', ss);
    } catch (e) {
      refused = e;
    }
    check(refused && refused.status === 2 &&
      /no kernel has PC samples/.test(refused.stderr) &&
      refused.stderr.trim().split('\n').length === 1,
      `${name} speedscope: a trace without PC samples was not refused in one line with exit 2`);
  } else {
    run('export', tracePath, '--format', 'speedscope', '-q', '-o', ss);
    ({ page, errors } = await open(ss));
    check(errors.length === 0, `${name} speedscope: page errors: ${errors.join('; ')}`);
    check((await page.title()) === `${name}.mprof - speedscope`,
      `${name} speedscope: title '${await page.title()}'`);
    const bar = await toolbar(page);
    const top = sampled[0];
    check(bar.name === `${top.short_name} (GPU ${top.device})`,
      `${name} speedscope: toolbar shows '${bar.name}', expected the dominant sampled kernel '${top.short_name}'`);
    check(bar.count === sampled.length,
      `${name} speedscope: ${bar.count} profiles shown, ${sampled.length} kernels have samples`);
    const shot = await screenshotStats(page, path.join(outDir, `${name}.speedscope.png`));
    check(shot.colours > 20 && shot.ink > 0.05,
      `${name} speedscope: screenshot looks blank (${shot.colours} colours, ${(shot.ink * 100).toFixed(1)}% ink)`);
    rows = await sandwichRows(page);
    const sass = [...rows.keys()].filter((r) => r.startsWith('+0x'));
    const pcs = top.hot.sampled_pcs;
    check(sass.length === pcs,
      `${name} speedscope: Sandwich lists ${sass.length} instructions, summary counts ${pcs} sampled PCs`);
    check(rows.has(top.short_name), `${name} speedscope: Sandwich lacks the kernel frame '${top.short_name}': ${[...rows.keys()].slice(0, 5).join(' | ')} ... ${[...rows.keys()].slice(-5).join(' | ')}`);
    const hot = top.hot.instructions[0];
    if (hot && hot.sass) {
      const frame = `+0x${hot.offset.toString(16).padStart(4, '0')} ${hot.sass}`;
      const row = rows.get(frame);
      check(row !== undefined && row.replace(/,/g, '').startsWith(`${hot.samples} (`),
        `${name} speedscope: Sandwich row for the hottest instruction '${frame}' reads '${row}', expected ${hot.samples} samples`);
    }
    await page.close();
  }

  // Trace Event Format, parsed by speedscope's Chrome trace importer: one
  // profile per thread that has events (each stream, each SM lane, each
  // NVTX thread).
  const te = path.join(outDir, `${name}.perfetto.json`);
  run('export', tracePath, '--format', 'chrome', '-q', '-o', te);
  const info = run('info', tracePath);
  const streams = +(info.match(/STREAMS=(\d+)/) || [0, 0])[1];
  const hasSpans = /SPANS=\d+/.test(info);
  // NVTX ranges and API calls add a thread per host thread.
  const hasHost = /RANGES=\d+/.test(info) || /API_CALLS=\d+/.test(info);
  ({ page, errors } = await open(te));
  check(errors.length === 0, `${name} perfetto: page errors: ${errors.join('; ')}`);
  const teBar = await toolbar(page);
  check(/^GPU \d+: .* \(pid \d+\), (stream \d+|SM \d+)/.test(teBar.name) ||
    (hasHost && /thread \d+/.test(teBar.name)),
    `${name} perfetto: toolbar shows '${teBar.name}', expected a GPU stream`);
  if (!hasSpans && !hasHost)
    check(teBar.count === streams,
      `${name} perfetto: ${teBar.count} threads shown, the trace has ${streams} streams`);
  else
    check(teBar.count > streams,
      `${name} perfetto: ${teBar.count} threads shown, expected streams and SM lanes or host threads`);
  const teShot = await screenshotStats(page, path.join(outDir, `${name}.perfetto.png`));
  check(teShot.colours > 5 && teShot.ink > 0.01,
    `${name} perfetto: screenshot looks blank (${teShot.colours} colours)`);
  await page.close();
  console.log(`${name}: speedscope ${sampled.length} profiles, ${rows.size} frames listed; ` +
    `trace events ${teBar.count} threads`);
}

await browser.close();
server.close();
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
