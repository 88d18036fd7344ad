// Locates the project root (the folder holding package.json) so that code finds committed files
// the same way from TypeScript sources under ts-jest and from compiled JavaScript under dist/.
// It reads the file system once per process; it never consults the working directory.
import fs from 'node:fs';
import path from 'node:path';

/** Deep enough for dist/<folder>/<sub>/… layouts; a deeper walk means a misplaced file. */
const MAX_WALK_DEPTH = 12;

let cachedRoot: string | null = null;

export class ProjectRootNotFoundError extends Error {
  readonly startDir: string;

  constructor(startDir: string) {
    super(`no package.json found in ${startDir} or its ${MAX_WALK_DEPTH} nearest parents`);
    this.name = 'ProjectRootNotFoundError';
    this.startDir = startDir;
  }
}

/** Absolute path of the nearest folder at or above this module that contains package.json. */
export function projectRoot(): string {
  if (cachedRoot !== null) return cachedRoot;
  let dir = __dirname;
  for (let depth = 0; depth <= MAX_WALK_DEPTH; depth += 1) {
    if (fs.existsSync(path.join(dir, 'package.json'))) {
      cachedRoot = dir;
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new ProjectRootNotFoundError(__dirname);
}
