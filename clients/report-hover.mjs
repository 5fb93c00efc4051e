// Hover compactor report's two charts in a real browser (Debian's chromium,
// driven by playwright-core): node report-hover.mjs PAGE.html FRACTION
// moves the pointer over each chart's plot at FRACTION of its width and
// prints one JSON line: the page's errors (uncaught exceptions and console
// errors), each chart's guide position and the report line shown.
import { chromium } from "playwright-core";
import { pathToFileURL } from "node:url";

const [page_path, fraction] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  await page.goto(pathToFileURL(page_path).href);
  const out = { errors, guides: {}, before: {} };
  for (const chart of ["ctx", "cache-chart"]) {
    out.before[chart] = await page.getAttribute(`#${chart}-guide`, "x1");
    const hit = page.locator(`#${chart}-hit`);
    await hit.scrollIntoViewIfNeeded();
    const box = await hit.boundingBox();
    await page.mouse.move(box.x + box.width * Number(fraction), box.y + box.height / 2);
    out.guides[chart] = await page.getAttribute(`#${chart}-guide`, "x1");
  }
  out.line = await page.textContent("#ctx-line");
  out.ids = await page.evaluate(() => {
    const seen = {};
    for (const e of document.querySelectorAll("[id]")) seen[e.id] = (seen[e.id] || 0) + 1;
    return Object.entries(seen).filter(([, n]) => n > 1).map(([id]) => id);
  });
  console.log(JSON.stringify(out));
} finally {
  await browser.close();
}
