/** Refs stage barrel: the one lore-ref grammar (see ref.ts). */
export { parseRef, formatRef, isUnderPrefix, resolveRef } from './ref.js';
export type { ParsedRef, RefFragment, ParseRefOptions, ResolvedRef } from './ref.js';
