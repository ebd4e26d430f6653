import { existsSync } from 'node:fs';
import path from 'node:path';

/** The project root, found from this file whether it runs from src/ (tsx) or dist/src/ (compiled). */
function findRoot(start: string): string {
  let dir = start;
  while (!existsSync(path.join(dir, 'openapi', 'v1.yaml'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`openapi/v1.yaml not found above ${start}`);
    dir = parent;
  }
  return dir;
}

export const projectRoot = findRoot(__dirname);
export const contractPath = path.join(projectRoot, 'openapi', 'v1.yaml');
