/** Coverage stage barrel (docs/COVERAGE.md): what lore the artifacts cite, and where the vault is thin. */
export { coverageReport } from './report.js';
export type { CoverageOptions } from './report.js';
export { readArtifacts, recogniseArtifact } from './artifacts.js';
export type { ReadArtifactsOptions } from './artifacts.js';
export { renderCoverageMarkdown } from './render-md.js';
export { renderCoverageHtml } from './render-html.js';
export type { CoverageHtmlContext } from './render-html.js';
export { checkCoverageOut, loadNoteLines, writeCoverageFiles } from './load.js';
export type { CoverageFiles } from './load.js';
export { COVERAGE_SCHEMA_VERSION } from './types.js';
export type {
  ApartRef,
  ArtifactKind,
  ArtifactSet,
  ArtifactSummary,
  Citation,
  CitationCheck,
  CitationRole,
  CitationScope,
  CitationStatus,
  ClassCoverage,
  CorpusCoverage,
  CorpusSubject,
  CoverageArtifact,
  CoverageReport,
  CoverageTotals,
  FolderCoverage,
  GroupCoverage,
  NoteCoverage,
  RefOccurrence,
  SkipReason,
  SkippedInput,
  VaultGaps,
} from './types.js';
