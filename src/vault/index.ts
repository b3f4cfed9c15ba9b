/** Vault stage barrel: scanning a vault and loading its configuration. */
export { scanVault, compareCodeUnits, DEFAULT_INCLUDE } from './scan.js';
export type { ScanOptions, ScanResult, ScannedFile, FileIdentity } from './scan.js';
export { loadVaultConfig, CONFIG_FILE_NAME, DEFAULT_MAX_FILE_BYTES } from './config.js';
export type { LoadVaultConfigOptions, LoadedVaultConfig } from './config.js';
