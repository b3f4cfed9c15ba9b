/** Types of scripts/big-note.mjs for the tests that import it. */

/**
 * One note of `bytes` bytes (ASCII) of ordinary lore: numbered heading sections of paragraphs with
 * wikilinks, a field line and a list; deterministic.
 */
export function bigLoreNote(bytes: number): string;
