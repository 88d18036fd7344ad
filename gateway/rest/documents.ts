// The persisted GraphQL documents behind REST routes: one named operation per file in
// gateway/rest/documents/, loaded once at start. The compose check validates every file against the
// composed API schema, so a schema change that breaks a REST path fails CI, not production.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../platform/paths';

export function documentsDir(): string {
  return path.join(projectRoot(), 'gateway', 'rest', 'documents');
}

export function loadPersistedDocuments(dir: string = documentsDir()): ReadonlyMap<string, string> {
  const documents = new Map<string, string>();
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.graphql')) continue;
    documents.set(file.slice(0, -'.graphql'.length), readFileSync(path.join(dir, file), 'utf8'));
  }
  return documents;
}
