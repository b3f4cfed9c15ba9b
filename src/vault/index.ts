/** Vault stage barrel: scanning a vault and loading its configuration. */
export { scanVault } from './scan.js';
export type { ScanOptions, ScanResult, ScannedFile, FileIdentity } from './scan.js';
export { loadVaultConfig } from './config.js';
export type { LoadVaultConfigOptions, LoadedVaultConfig } from './config.js';
