import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Files that start processes or a browser: seconds of waiting each, whatever their size. */
const STARTS_PROCESSES = /\b(spawn|execFile|fork)\(|spawnGateway\(|pnpmStart\(|chromium\.launch\(/;

/**
 * The order files start in (docs/testing.md). With timings of an earlier run on this machine,
 * vitest's own: failed first, then longest first. Without (a clean clone, as in CI), the files that
 * start processes or a browser first, so the longest files do not start last and leave one core
 * working alone at the end; then larger files first.
 */
export default class Sequencer extends BaseSequencer {
  private readonly spawns = new Map<string, boolean>();

  private startsProcesses(file: string): boolean {
    let known = this.spawns.get(file);
    if (known === undefined) {
      known = STARTS_PROCESSES.test(readFileSync(file, "utf8"));
      this.spawns.set(file, known);
    }
    return known;
  }

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const key = (f: TestSpecification) => `${f.project.name}:${relative(this.ctx.config.root, f.moduleId)}`;
    const cache = this.ctx.cache;
    const timed = sorted.every((f) => cache.getFileTestResults(key(f)) !== undefined);
    if (timed) return sorted;
    const first = sorted.filter((f) => this.startsProcesses(f.moduleId));
    return [...first, ...sorted.filter((f) => !this.startsProcesses(f.moduleId))];
  }
}
