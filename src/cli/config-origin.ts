/**
 * Where a setting of the layered config files came from (config-file.ts, `loadConfigFile`): the
 * file that set it, for `eddy config`'s sources and for messages that name the file to fix.
 */

/** The files' origins as loaded: the nearest file, and the file of each setting. */
export interface ConfigOrigins {
  path: string | undefined;
  /** `LoadedConfig.origins`; `path` stands for every setting when absent. */
  origins?: ReadonlyMap<string, string> | undefined;
}

/** The file that set `key` (a top-level key, or `history.strategy`, `profiles.NAME`, …). */
export function configPath(s: ConfigOrigins, key: string): string | undefined {
  return s.origins?.get(key) ?? s.path;
}
