/**
 * coverage.html in a real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core):
 * loads with no console errors and no network requests, one bar per class and per folder, sorting a
 * column reorders the rows. Screenshots go to test-artifacts/ (gitignored).
 *
 * Skipped (with a message) only when /usr/bin/chromium is absent AND not in CI; in CI (.ci/run installs
 * chromium) a missing browser fails the run.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coverageReport, loadNoteLines, readArtifacts, writeCoverageFiles } from '../src/coverage/index.js';
import type { CoverageReport } from '../src/coverage/index.js';
import { indexVault } from '../src/indexer/index.js';
import { AETHERIA, FIXTURE_VAULT, GHOSTLIGHT, REPO, hasShared, sharedNotice } from './helpers/shared.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const inCI = Boolean(process.env.CI);
const runBrowser = hasChromium || inCI;
if (!runBrowser) console.warn(`[coverage-browser] ${CHROMIUM} not found and not in CI: browser tests skipped (apt-get install -y chromium to run them)`);

const ARTIFACT_DIR = join(REPO, 'test-artifacts');

interface Loaded {
  page: Page;
  consoleErrors: string[];
  requests: string[];
}

async function open(browser: Browser, file: string, width = 1400): Promise<Loaded> {
  const page = await browser.newPage({ viewport: { width, height: 1000 } });
  const consoleErrors: string[] = [];
  const requests: string[] = [];
  const url = pathToFileURL(file).href;
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  page.on('request', (r) => { if (r.url() !== url) requests.push(r.url()); });
  await page.goto(url, { waitUntil: 'load' });
  return { page, consoleErrors, requests };
}

/** hsl(145, 55%, 61%) (92 − 0.6 × 52, rounded) as Chromium computes it. */
const HARBOR_SHADE = 'rgb(101, 210, 146)';

const rowPaths = (page: Page): Promise<string[]> => page.$$eval('#notes tbody tr', (rows) => rows.map((r) => r.getAttribute('data-path') ?? ''));

describe.runIf(runBrowser)('renderCoverageHtml in headless Chromium', () => {
  let browser: Browser;
  let dir: string;
  let report: CoverageReport;
  let fixturePage: Loaded;

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is required in CI (.ci/run installs it)`).toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'loretrace-cov-html-'));
    const index = await indexVault(FIXTURE_VAULT, { persist: false });
    const { artifacts, skipped } = await readArtifacts(['lore-fixtures/artifacts'], { cwd: REPO });
    report = coverageReport(index, artifacts, { noteLines: await loadNoteLines(index), skipped });
    const files = await writeCoverageFiles(report, dir, { noteLines: await loadNoteLines(index), index });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    fixturePage = await open(browser, files.html);
  });

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('loads with no console errors and no network requests', () => {
    expect(fixturePage.consoleErrors).toEqual([]);
    expect(fixturePage.requests).toEqual([]);
  });

  it('draws exactly one bar per target class and one per folder', async () => {
    const classKeys = await fixturePage.page.$$eval('#chart-classes rect.bar', (els) => els.map((e) => e.getAttribute('data-key')));
    const folderKeys = await fixturePage.page.$$eval('#chart-folders rect.bar', (els) => els.map((e) => e.getAttribute('data-key')));
    expect(classKeys).toEqual(report.classes.map((c) => c.class));
    expect(folderKeys).toEqual(report.folders.map((f) => f.folder));
    // Bar width follows line coverage: Coverage/ is 42.86% of the 360px track (9 of 21 body lines in cited ranges).
    const w = await fixturePage.page.$eval('#chart-folders rect.bar[data-key="Coverage"]', (e) => Number(e.getAttribute('width')));
    expect(w).toBe(154.3);
    // The charts use the page width: each SVG is as wide as its figure, not a fixed 810px.
    const widths = await fixturePage.page.$$eval('#charts figure', (els) => els.map((e) => [Math.round(e.getBoundingClientRect().width), Math.round(e.querySelector('svg')!.getBoundingClientRect().width)]));
    for (const [fig, svg] of widths) expect(svg).toBe(fig);
    // Full names on hover: every bar row carries its full key in <title>.
    const titles = await fixturePage.page.$$eval('#chart-folders g.row title', (els) => els.map((e) => e.textContent!.split(':')[0]));
    expect(titles).toEqual(report.folders.map((f) => f.folder));
  });

  it('sorts the notes table by a column, then reverses it on a second click', async () => {
    const { page } = fixturePage;
    const byPath = report.notes.map((n) => n.path);
    expect(await rowPaths(page)).toEqual(byPath);
    const header = page.locator('#notes thead th', { hasText: 'citations' }).locator('button');
    await header.click();
    const asc = [...report.notes].sort((a, b) => a.citations - b.citations || (a.path < b.path ? -1 : 1)).map((n) => n.path);
    expect(await rowPaths(page)).toEqual(asc);
    expect(await page.locator('#notes thead th', { hasText: 'citations' }).getAttribute('aria-sort')).toBe('ascending');
    await header.click();
    const desc = [...report.notes].sort((a, b) => b.citations - a.citations || (a.path < b.path ? -1 : 1)).map((n) => n.path);
    expect(await rowPaths(page)).toEqual(desc);
    expect(desc.slice(0, 2)).toEqual(['Coverage/Harbor Ledger.md', 'Coverage/Tide Court.md']);
    expect(desc).not.toEqual(byPath);
  });

  it('puts what to act on first, then the cited notes (most cited first) with their cited lines marked, and a link graph', async () => {
    const { page } = fixturePage;
    const order = await page.$$eval('section[id]', (els) => els.map((e) => e.id));
    expect(order.slice(0, 4)).toEqual(['todo', 'cited', 'graph', 'charts']);
    expect(await page.$$eval('#todo h3', (els) => els.map((e) => e.textContent))).toEqual([
      'Stale citations (5)', 'Unresolved links (4)', 'Orphan notes (18)', expect.stringMatching(/^Never-cited classes \(\d+\)$/), expect.stringMatching(/^Never-cited folders \(\d+\)$/),
    ]);
    expect(await page.locator('#todo li', { hasText: 'Coverage/Harbor Ledger.md:16' }).count()).toBe(1);
    expect(await page.$$eval('#cited details.cnote', (els) => els.map((e) => e.getAttribute('data-path')))).toEqual([
      'Coverage/Harbor Ledger.md', 'Coverage/Tide Court.md', 'Coverage/Archive/Old Pier.md',
    ]);
    const marked = await page.$$eval('#cited details.cnote[data-path="Coverage/Harbor Ledger.md"] li.cited', (els) => els.map((e) => Number(e.getAttribute('value'))));
    expect(marked).toEqual([5, 9, 10, 14, 15, 20]);
    // A cited line is visibly marked (green background).
    expect(await page.evaluate(`getComputedStyle(document.querySelector('#cited li.cited')).backgroundColor`)).toBe('rgb(212, 239, 223)');
    const nodes = await page.$$eval('#link-graph g.node', (els) => els.map((e) => [e.getAttribute('data-path'), e.classList.contains('cited')]));
    expect(nodes.slice(0, 3)).toEqual([['Coverage/Harbor Ledger.md', true], ['Coverage/Tide Court.md', true], ['Coverage/Archive/Old Pier.md', true]]);
    expect(nodes.length).toBeGreaterThan(3);
    expect(nodes.slice(3).every(([, cited]) => cited === false)).toBe(true);
  });

  it('folds away the classes that only repeat a folder name at a click', async () => {
    const { page } = fixturePage;
    const toggle = page.locator('#fold-folder-classes');
    expect(await page.locator('#chart-classes').isVisible()).toBe(true);
    await toggle.check();
    expect(await page.locator('#chart-classes').isVisible()).toBe(false);
    expect(await page.locator('#chart-classes-own').isVisible()).toBe(true);
    const own = await page.$$eval('#chart-classes-own rect.bar', (els) => els.map((e) => e.getAttribute('data-key')));
    expect(own.length).toBeLessThan(report.classes.length);
    expect(own).not.toContain('coverage');
    await toggle.uncheck();
    expect(await page.locator('#chart-classes').isVisible()).toBe(true);
  });

  it('fits a narrow (390px) screen without sideways scrolling, and saves desktop and narrow screenshots', async () => {
    const narrow = await open(browser, join(dir, 'coverage.html'), 390);
    expect(narrow.consoleErrors).toEqual([]);
    const overflow = await narrow.page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBe(0);
    mkdirSync(ARTIFACT_DIR, { recursive: true });
    await narrow.page.screenshot({ path: join(ARTIFACT_DIR, 'coverage-narrow.png'), fullPage: false });
    await fixturePage.page.evaluate('window.scrollTo(0, 0)');
    await fixturePage.page.screenshot({ path: join(ARTIFACT_DIR, 'coverage-desktop.png'), fullPage: false });
    expect(existsSync(join(ARTIFACT_DIR, 'coverage-narrow.png'))).toBe(true);
    await narrow.page.close();
  });

  it('shades the vault tree and saves a screenshot', async () => {
    const { page } = fixturePage;
    expect(await page.$$eval('#tree details[data-folder]', (els) => els.map((e) => e.getAttribute('data-folder')))).toEqual(['', ...report.folders.map((f) => f.folder)]);
    // Shading: never cited = grey #eceff1; Tide Court (50% of lines in cited ranges) = hsl(145, 55%, 66%); Harbor Ledger (60%) = hsl(145, 55%, 61%).
    const chip = (path: string): Promise<unknown> =>
      page.evaluate(`getComputedStyle(document.querySelector(${JSON.stringify(`#tree .tnote .chip[title^="${path}:"]`)})).backgroundColor`);
    expect(await chip('Coverage/Lonely Reef.md')).toBe('rgb(236, 239, 241)');
    expect(await chip('Coverage/Tide Court.md')).toBe('rgb(121, 216, 160)');
    expect(await chip('Coverage/Harbor Ledger.md')).toBe(HARBOR_SHADE);
    mkdirSync(ARTIFACT_DIR, { recursive: true });
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: join(ARTIFACT_DIR, 'coverage.png'), fullPage: false });
    await page.screenshot({ path: join(ARTIFACT_DIR, 'coverage-full.png'), fullPage: true });
    expect(existsSync(join(ARTIFACT_DIR, 'coverage.png'))).toBe(true);
    expect(existsSync(join(ARTIFACT_DIR, 'coverage-full.png'))).toBe(true);
  });

  describe.skipIf(!hasShared)('on the real AetheriaLore vault with the Ghostlight artifacts', () => {
    if (!hasShared) console.warn(`[coverage-browser] ${sharedNotice}`);
    let real: Loaded;
    let realReport: CoverageReport;
    beforeAll(async () => {
      const index = await indexVault(AETHERIA, { persist: false });
      const { artifacts, skipped } = await readArtifacts([GHOSTLIGHT], { cwd: REPO });
      realReport = coverageReport(index, artifacts, { noteLines: await loadNoteLines(index), skipped });
      const files = await writeCoverageFiles(realReport, join(dir, 'real'), { noteLines: await loadNoteLines(index), index });
      real = await open(browser, files.html);
    });

    it('loads cleanly with 19 class bars, one bar per folder and 148 note rows', async () => {
      expect(real.consoleErrors).toEqual([]);
      expect(real.requests).toEqual([]);
      expect(await real.page.locator('#chart-classes rect.bar').count()).toBe(19);
      expect(realReport.folders.length).toBe(20);
      expect(await real.page.locator('#chart-folders rect.bar').count()).toBe(20);
      expect(await real.page.locator('#notes tbody tr').count()).toBe(148);
      // Sorted by citations, most first (ties by path): the five Sella notes lead.
      await real.page.locator('#notes thead th', { hasText: /^citations$/ }).locator('button').click();
      await real.page.locator('#notes thead th', { hasText: /^citations$/ }).locator('button').click();
      expect((await rowPaths(real.page))[0]).toBe('Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Aya Collective.md');
      expect(await real.page.$$eval('#cited details.cnote', (els) => els.length)).toBe(5);
      await real.page.evaluate('window.scrollTo(0, 0)');
      await real.page.screenshot({ path: join(ARTIFACT_DIR, 'coverage-aetheria.png'), fullPage: false });
    });
  });
});
