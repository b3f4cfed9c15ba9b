/** Small formatting helpers shared by the Markdown and HTML renderers (internal). */

/** `0.4567` → `45.7%`; null (nothing to cover) → `–`. */
export function pct(value: number | null): string {
  return value === null ? '–' : `${(Math.round(value * 1000) / 10).toFixed(1)}%`;
}

/** Code-unit string compare (never localeCompare: output must not depend on the machine's locale). */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
