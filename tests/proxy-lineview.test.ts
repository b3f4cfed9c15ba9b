/**
 * `lineView` (src/proxy/withhold.ts): the responder's line numbers in a note with hidden sections — each
 * section (nested ones merged) counts as one line, its marker's — and back to disk lines for the ledger.
 */
import { describe, expect, it } from 'vitest';
import { lineView } from '../src/proxy/withhold.js';
import type { HiddenSection } from '../src/policy/types.js';

const section = (line_start: number, line_end: number): HiddenSection =>
  ({ path: 'N.md', heading: 'H', line_start, line_end, chunks: [], pointer: '/p' }) as HiddenSection;

describe('lineView', () => {
  it('is the identity in a note without hidden sections', () => {
    const v = lineView(20, []);
    expect([v.lineCount, v.toView(7), v.firstDisk(7), v.lastDisk(7)]).toEqual([20, 7, 7, 7]);
  });

  it('counts a hidden section as its one marker line (disk 9-16 of 20 → view 9; disk 17-20 → view 10-13)', () => {
    const v = lineView(20, [section(9, 16)]);
    expect(v.lineCount).toBe(13);
    expect([1, 8, 9, 12, 16, 17, 20].map(v.toView)).toEqual([1, 8, 9, 9, 9, 10, 13]);
    expect([v.firstDisk(9), v.lastDisk(9), v.firstDisk(10), v.lastDisk(13)]).toEqual([9, 16, 17, 20]);
  });

  it('merges a nested section into its parent and keeps adjacent ones apart; a section at the end ends the view', () => {
    const v = lineView(30, [section(5, 12), section(8, 10), section(13, 15), section(25, 30)]);
    // view: 1-4, marker 5 (disk 5-12), marker 6 (disk 13-15), 7-15 (disk 16-24), marker 16 (disk 25-30)
    expect(v.lineCount).toBe(16);
    expect([4, 5, 9, 12, 13, 15, 16, 24, 25, 30].map(v.toView)).toEqual([4, 5, 5, 5, 6, 6, 7, 15, 16, 16]);
    expect([5, 6, 7, 15, 16].map((x) => [v.firstDisk(x), v.lastDisk(x)])).toEqual([[5, 12], [13, 15], [16, 16], [24, 24], [25, 30]]);
  });
});
