/** The default output directory: packages/console/dist/console. */
export const DEFAULT_OUT_DIR: string;
/** Builds the console into `outDir`, atomically and without removing what a server may serve; returns the file names written. */
export function buildConsole(outDir?: string): Promise<string[]>;
