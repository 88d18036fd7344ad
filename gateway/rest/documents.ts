// The persisted GraphQL documents behind REST routes: one named operation per file in
// gateway/rest/documents/, plus shared fragments in documents/fragments/ that a document uses by
// spreading them (each document gets exactly the fragments it needs, transitively). The gateway
// and the compose check read them through this one loader, so what CI validates is what runs.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Kind, parse } from 'graphql';
import { projectRoot } from '../../platform/paths';

export function documentsDir(): string {
  return path.join(projectRoot(), 'gateway', 'rest', 'documents');
}

const SPREAD = /\.\.\.\s*([_A-Za-z][_0-9A-Za-z]*)/g;

function spreadNames(source: string): string[] {
  return [...source.matchAll(SPREAD)].map((match) => match[1]).filter((name) => name !== 'on');
}

/** Shared fragment name → its source, from every file in `<dir>/fragments/`. */
export function loadSharedFragments(dir: string): ReadonlyMap<string, string> {
  const fragmentsDir = path.join(dir, 'fragments');
  const fragments = new Map<string, string>();
  if (!existsSync(fragmentsDir)) return fragments;
  for (const file of readdirSync(fragmentsDir).sort()) {
    if (!file.endsWith('.graphql')) continue;
    const source = readFileSync(path.join(fragmentsDir, file), 'utf8');
    for (const definition of parse(source).definitions) {
      if (definition.kind !== Kind.FRAGMENT_DEFINITION || !definition.loc) {
        throw new Error(`fragments/${file}: holds something other than fragment definitions`);
      }
      const name = definition.name.value;
      if (fragments.has(name))
        throw new Error(`fragments/${file}: fragment ${name} is defined twice`);
      fragments.set(name, source.slice(definition.loc.start, definition.loc.end));
    }
  }
  return fragments;
}

/** The document with every shared fragment it spreads (and they spread) appended, once each. */
export function withSharedFragments(
  source: string,
  fragments: ReadonlyMap<string, string>,
): string {
  const defined = new Set(
    [...source.matchAll(/\bfragment\s+([_A-Za-z][_0-9A-Za-z]*)/g)].map((match) => match[1]),
  );
  const appended: string[] = [];
  const pending = spreadNames(source);
  while (pending.length > 0) {
    const name = pending.shift()!;
    if (defined.has(name)) continue;
    const fragment = fragments.get(name);
    if (fragment === undefined) continue; // left for validation to report as an unknown fragment
    defined.add(name);
    appended.push(fragment);
    pending.push(...spreadNames(fragment));
  }
  return appended.length === 0 ? source : `${source.trimEnd()}\n\n${appended.join('\n\n')}\n`;
}

/** Every persisted document as `{file, source}`, shared fragments included, in file order. */
export function readPersistedDocuments(
  dir: string = documentsDir(),
): Array<{ file: string; source: string }> {
  if (!existsSync(dir)) return [];
  const fragments = loadSharedFragments(dir);
  return readdirSync(dir)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .map((file) => ({
      file,
      source: withSharedFragments(readFileSync(path.join(dir, file), 'utf8'), fragments),
    }));
}

/** Document name (file name without .graphql) → the source the gateway executes. */
export function loadPersistedDocuments(dir: string = documentsDir()): ReadonlyMap<string, string> {
  return new Map(
    readPersistedDocuments(dir).map(({ file, source }) => [
      file.slice(0, -'.graphql'.length),
      source,
    ]),
  );
}
