/** Small formatting helpers shared by the Markdown and HTML renderers (internal). */
import type { NoteCoverage } from './types.js';

/** `0.4567` → `45.7%`; null (nothing to cover) → `–`. */
export function pct(value: number | null): string {
  return value === null ? '–' : `${(Math.round(value * 1000) / 10).toFixed(1)}%`;
}

/** Code-unit string compare (never localeCompare: output must not depend on the machine's locale). */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `3-5, 9` for `[[3, 5], [9, 9]]`; `–` for none. */
export function rangesText(ranges: readonly [number, number][]): string {
  return ranges.length === 0 ? '–' : ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(', ');
}

/**
 * Cited notes, most cited first: by citations (descending), then stale citations (descending), then path.
 * The order an author reads the report in: what the artifacts lean on most, and what went stale.
 */
export function citedNotesFirst(notes: readonly NoteCoverage[]): NoteCoverage[] {
  return notes.filter((n) => n.citations > 0).sort((a, b) => b.citations - a.citations || b.stale_citations - a.stale_citations || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

