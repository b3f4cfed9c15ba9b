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

async function open(browser: Browser, file: string): Promise<Loaded> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const consoleErrors: string[] = [];
  const requests: string[] = [];
  const url = pathToFileURL(file).href;
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  page.on('request', (r) => { if (r.url() !== url) requests.push(r.url()); });
  await page.goto(url, { waitUntil: 'load' });
  return { page, consoleErrors, requests };
}

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
    const files = await writeCoverageFiles(report, dir);
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
    // Bar width follows line coverage: Coverage/ is 71.43% of the 360px track.
    const w = await fixturePage.page.$eval('#chart-folders rect.bar[data-key="Coverage"]', (e) => Number(e.getAttribute('width')));
    expect(w).toBe(257.1);
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

  it('shades the vault tree and saves a screenshot', async () => {
    const { page } = fixturePage;
    expect(await page.$$eval('#tree details[data-folder]', (els) => els.map((e) => e.getAttribute('data-folder')))).toEqual(['', ...report.folders.map((f) => f.folder)]);
    // Shading: never cited = grey #eceff1; Tide Court (100% covered) = hsl(145, 55%, 40%); Harbor Ledger (90%) = hsl(145, 55%, 45%).
    const chip = (path: string): Promise<unknown> =>
      page.evaluate(`getComputedStyle(document.querySelector(${JSON.stringify(`#tree .tnote .chip[title^="${path}:"]`)})).backgroundColor`);
    expect(await chip('Coverage/Lonely Reef.md')).toBe('rgb(236, 239, 241)');
    expect(await chip('Coverage/Tide Court.md')).toBe('rgb(46, 158, 93)');
    expect(await chip('Coverage/Harbor Ledger.md')).toBe('rgb(52, 178, 104)');
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
      const files = await writeCoverageFiles(realReport, join(dir, 'real'));
      real = await open(browser, files.html);
    });

    it('loads cleanly with 19 class bars, one bar per folder and 148 note rows', async () => {
      expect(real.consoleErrors).toEqual([]);
      expect(real.requests).toEqual([]);
      expect(await real.page.locator('#chart-classes rect.bar').count()).toBe(19);
      expect(realReport.folders.length).toBe(20);
      expect(await real.page.locator('#chart-folders rect.bar').count()).toBe(20);
      expect(await real.page.locator('#notes tbody tr').count()).toBe(148);
      await real.page.locator('#notes thead th', { hasText: 'line coverage' }).locator('button').click();
      await real.page.locator('#notes thead th', { hasText: 'line coverage' }).locator('button').click();
      expect((await rowPaths(real.page))[0]).toBe('Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Aya Collective.md');
      await real.page.evaluate('window.scrollTo(0, 0)');
      await real.page.screenshot({ path: join(ARTIFACT_DIR, 'coverage-aetheria.png'), fullPage: false });
    });
  });
});
