/** The default output directory: packages/console/dist/console. */
export const DEFAULT_OUT_DIR: string;
/** Builds the console into `outDir` (emptied first); returns the file names written. */
export function buildConsole(outDir?: string): Promise<string[]>;
