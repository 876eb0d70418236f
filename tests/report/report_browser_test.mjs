// Opens Myriad's HTML reports in headless Chromium (Debian's, driven by
// playwright-core from tools/report/node_modules) and checks them as a planner
// would use them: no console errors, one point drawn per configuration, brushing
// filters the listing, a click shows a configuration's breakdown, memory and
// scenario; the campaign and step reports draw their charts. Saves screenshots.
//
//   node report_browser_test.mjs REPORT_DIR OUT_DIR configurations=FILE [campaign=FILE]
//     [sensitivity=FILE] [step=FILE]
//
// Exit codes: 0 passed, 1 failed, 77 skipped (no Chromium or no playwright-core).
import { createRequire } from "node:module";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";

const [reportDir, outDir, ...reports] = process.argv.slice(2);
const chromium = process.env.MYRIAD_CHROMIUM || "/usr/bin/chromium";
if (!existsSync(chromium)) {
  console.log(`SKIP: no Chromium at ${chromium} (tools/setup.sh installs Debian's chromium)`);
  process.exit(77);
}
let playwright;
try {
  playwright = createRequire(path.join(path.resolve(reportDir), "package.json"))("playwright-core");
} catch (e) {
  console.log(`SKIP: playwright-core is not installed in ${reportDir}/node_modules (tools/setup.sh)`);
  process.exit(77);
}
mkdirSync(outDir, { recursive: true });

const failures = [];
function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures.push(what);
}

const browser = await playwright.chromium.launch({
  executablePath: chromium,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

async function open(file) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
  const errors = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  // Offline: any request beyond the file itself is a failure.
  const requests = [];
  page.on("request", (r) => {
    if (!r.url().startsWith("file://")) requests.push(r.url());
  });
  await page.goto("file://" + path.resolve(file));
  try {
    await page.waitForFunction(() => window.myriadReport && (window.myriadReport.ready || window.myriadReport.failed), null, {
      timeout: 30000,
    });
  } catch (e) {
    errors.push(`not drawn within 30 s: ${e.message.split("\n")[0]}`);
  }
  if (errors.length > 0) throw new Error(`${file}: ${errors.join(" | ")}`);
  return { page, errors, requests };
}

async function configurations(file) {
  const { page, errors, requests } = await open(file);
  const expected = await page.evaluate(() => {
    const data = JSON.parse(document.getElementById("myriad-data").textContent);
    return data.rows.filter((r) => r.m).length;
  });
  const drawn = await page.evaluate(() => document.querySelectorAll("#scatter g.points_marks > path").length);
  check(expected > 0 && drawn === expected, `configurations: ${drawn} points drawn for ${expected} configurations`);
  const before = await page.evaluate(() => window.myriadReport.selected);
  check(before === expected, `configurations: all ${expected} selected before brushing (${before})`);
  // Brush a box around one point: the listing keeps what the box holds.
  const box = await page.locator("#scatter g.points_marks > path").first().boundingBox();
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  await page.mouse.move(cx - 12, cy - 12);
  await page.mouse.down();
  await page.mouse.move(cx + 12, cy + 12, { steps: 5 });
  await page.mouse.up();
  await page.waitForTimeout(200);
  const after = await page.evaluate(() => window.myriadReport.selected);
  const listed = await page.evaluate(() => document.querySelectorAll("#listing tbody tr").length);
  check(after >= 1 && after < expected, `configurations: brushing selects ${after} of ${expected}`);
  check(listed === Math.min(after, 20), `configurations: the listing shows the ${listed} selected`);
  const text = await page.locator("#selected").textContent();
  check(text.startsWith(`${after} of ${expected}`), `configurations: the count reads "${text}"`);
  await page.screenshot({ path: path.join(outDir, "configurations-brushed.png"), fullPage: true });
  // Clear the brush, then click a point: its breakdown, memory and scenario.
  await page.mouse.click(5, 5);
  const point = await page.locator("#scatter g.points_marks > path").nth(Math.min(1, expected - 1)).boundingBox();
  await page.mouse.click(point.x + point.width / 2, point.y + point.height / 2);
  await page.waitForTimeout(300);
  const shown = await page.evaluate(() => window.myriadReport.shown);
  check(shown !== null && shown !== undefined, `configurations: a click shows configuration ${shown}`);
  const bars = await page.evaluate(() => document.querySelectorAll("#breakdown g.mark-rect > path").length);
  check(bars >= 1, `configurations: its breakdown has ${bars} bars`);
  const memory = await page.evaluate(() => document.querySelectorAll("#memory g.mark-rect > path").length);
  check(memory >= 1, `configurations: its memory has ${memory} parts`);
  const yaml = await page.locator("#yaml").textContent();
  check(yaml.includes("parallelism:") && yaml.includes("cluster:"), "configurations: its scenario YAML is shown");
  // Another x axis redraws every point.
  await page.selectOption("#x-axis", "step_time_s");
  await page.waitForTimeout(300);
  const redrawn = await page.evaluate(() => document.querySelectorAll("#scatter g.points_marks > path").length);
  check(redrawn === expected, `configurations: ${redrawn} points after choosing another x axis`);
  const multiples = await page.evaluate(() => document.querySelectorAll("#multiples svg").length);
  check(multiples === 1, "configurations: the small multiples are drawn");
  await page.screenshot({ path: path.join(outDir, "configurations.png"), fullPage: true });
  check(errors.length === 0, `configurations: no console errors (${errors.join(" | ")})`);
  check(requests.length === 0, `configurations: nothing fetched from a network (${requests.join(" ")})`);
}

async function simple(kind, file, charts) {
  const { page, errors, requests } = await open(file);
  for (const id of charts) {
    const marks = await page.evaluate((id) => document.querySelectorAll(`#${id} svg path`).length, id);
    check(marks > 0, `${kind}: chart #${id} drawn (${marks} marks)`);
  }
  await page.screenshot({ path: path.join(outDir, `${kind}.png`), fullPage: true });
  check(errors.length === 0, `${kind}: no console errors (${errors.join(" | ")})`);
  check(requests.length === 0, `${kind}: nothing fetched from a network (${requests.join(" ")})`);
}

try {
  for (const arg of reports) {
    const [kind, file] = arg.split("=");
    if (kind === "configurations") await configurations(file);
    else if (kind === "campaign") await simple(kind, file, ["ettr", "days", "goodput", "cost", "paired", "lost", "timeline"]);
    // campaign --days: tokens trained and tokens per dollar in place of days and cost.
    else if (kind === "campaign-days") await simple(kind, file, ["ettr", "tokens", "goodput", "tokens_per_usd", "paired", "lost", "timeline"]);
    else if (kind === "sensitivity") await simple(kind, file, ["ettr", "tokens"]);
    else if (kind === "step") await simple(kind, file, ["breakdown", "wait"]);
    else check(false, `unknown report kind ${kind}`);
  }
} catch (e) {
  check(false, `the test itself: ${e.stack || e}`);
} finally {
  await browser.close();
}
console.log(failures.length === 0 ? "report browser test: passed" : `report browser test: ${failures.length} failed`);
process.exit(failures.length === 0 ? 0 : 1);
