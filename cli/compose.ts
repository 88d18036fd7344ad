// `spend-control compose [--check]`: builds every subgraph schema in-process (no servers, no
// network, no rover), composes them with @apollo/composition, and writes schema/. The check mode
// regenerates in memory and fails on drift from the committed files or on a REST persisted
// document that no longer validates; it also lists breaking changes against the committed API.
import { existsSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { composeServices } from '@apollo/composition';
import { diff, CriticalityLevel } from '@graphql-inspector/core';
import { printSubgraphSchema } from '@apollo/subgraph';
import { buildSchema, type GraphQLSchema, Kind, parse, printSchema, validate } from 'graphql';
import { projectRoot } from '../platform/paths';
import { parseCommandArgs } from './args';
import { readPersistedDocuments } from '../gateway/rest/documents';
import type { SubgraphModule } from '../subgraphs/kit';
import { canonicalSubgraphUrl, subgraphModules } from '../subgraphs/registry';

export const SUPERGRAPH_FILE = 'supergraph.graphql';
export const API_FILE = 'api.graphql';

export function defaultSchemaDir(): string {
  return path.join(projectRoot(), 'schema');
}

export function defaultDocumentsDir(): string {
  return path.join(projectRoot(), 'gateway', 'rest', 'documents');
}

export interface ComposedSchemas {
  /** Subgraph name → SDL as `_service { sdl }` serves it. */
  readonly subgraphSdl: Readonly<Record<string, string>>;
  readonly supergraphSdl: string;
  /** The client-facing schema: the supergraph without federation machinery. */
  readonly apiSdl: string;
  readonly hints: readonly string[];
}

export class CompositionError extends Error {
  readonly errors: readonly string[];

  constructor(errors: readonly string[]) {
    super(`composition failed:\n${errors.map((error) => `  ${error}`).join('\n')}`);
    this.name = 'CompositionError';
    this.errors = errors;
  }
}

/** Every committed file ends in exactly one newline, so editors and the drift check agree. */
function asFile(sdl: string): string {
  return `${sdl.trimEnd()}\n`;
}

export async function composeSupergraph(
  modules: readonly SubgraphModule[] = subgraphModules(),
): Promise<ComposedSchemas> {
  const subgraphSdl: Record<string, string> = {};
  for (const module of modules) {
    if (subgraphSdl[module.name] !== undefined)
      throw new CompositionError([`subgraph ${module.name} is listed twice`]);
    subgraphSdl[module.name] = asFile(printSubgraphSchema(await module.buildSchema()));
  }
  const result = composeServices(
    modules.map((module) => ({
      name: module.name,
      url: canonicalSubgraphUrl(module.name),
      typeDefs: parse(subgraphSdl[module.name]),
    })),
  );
  if (result.errors !== undefined)
    throw new CompositionError(result.errors.map((error) => error.message));
  return {
    subgraphSdl,
    supergraphSdl: asFile(result.supergraphSdl),
    apiSdl: asFile(printSchema(result.schema.toAPISchema().toGraphQLJSSchema())),
    hints: result.hints.map((hint) => hint.toString()),
  };
}

/** File name → content, for everything compose writes under schema/. */
export function schemaFiles(composed: ComposedSchemas): Map<string, string> {
  const files = new Map<string, string>();
  for (const [name, sdl] of Object.entries(composed.subgraphSdl)) files.set(`${name}.graphql`, sdl);
  files.set(SUPERGRAPH_FILE, composed.supergraphSdl);
  files.set(API_FILE, composed.apiSdl);
  return files;
}

function graphqlFilesIn(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((file) => file.endsWith('.graphql'))
        .sort()
    : [];
}

export interface WriteResult {
  readonly composed: ComposedSchemas;
  readonly written: readonly string[];
  /** Stale .graphql files no subgraph produces any more. */
  readonly removed: readonly string[];
}

export async function writeSchemas(
  options: { modules?: readonly SubgraphModule[]; schemaDir?: string } = {},
): Promise<WriteResult> {
  const schemaDir = options.schemaDir ?? defaultSchemaDir();
  const composed = await composeSupergraph(options.modules);
  const files = schemaFiles(composed);
  const removed = graphqlFilesIn(schemaDir).filter((file) => !files.has(file));
  for (const file of removed) unlinkSync(path.join(schemaDir, file));
  for (const [file, content] of files) writeFileSync(path.join(schemaDir, file), content);
  return { composed, written: [...files.keys()], removed };
}

/** Problems of the persisted documents against an API schema: `<file>: <problem>` per line. */
export function validateDocuments(
  apiSchema: GraphQLSchema,
  documentsDir: string = defaultDocumentsDir(),
): string[] {
  const problems: string[] = [];
  let documents;
  try {
    documents = readPersistedDocuments(documentsDir);
  } catch (error) {
    return [`fragments: ${(error as Error).message}`];
  }
  for (const { file, source } of documents) {
    let document;
    try {
      document = parse(source);
    } catch (error) {
      problems.push(`${file}: ${(error as Error).message}`);
      continue;
    }
    const operations = document.definitions.filter(
      (definition) => definition.kind === Kind.OPERATION_DEFINITION,
    );
    if (operations.length !== 1 || operations[0].name === undefined) {
      problems.push(`${file}: must hold exactly one named operation`);
    }
    for (const error of validate(apiSchema, document)) problems.push(`${file}: ${error.message}`);
  }
  return problems;
}

/** Breaking changes from the committed API schema to the new one, as inspector words them. */
export async function breakingChanges(
  committedApiSdl: string,
  newApiSdl: string,
): Promise<string[]> {
  const changes = await diff(buildSchema(committedApiSdl), buildSchema(newApiSdl));
  return changes
    .filter((change) => change.criticality.level === CriticalityLevel.Breaking)
    .map((change) => change.message);
}

export interface SchemaCheckResult {
  readonly ok: boolean;
  /** Composition errors; when present nothing else could be checked. */
  readonly errors: readonly string[];
  readonly drift: readonly string[];
  readonly invalidDocuments: readonly string[];
  readonly breakingChanges: readonly string[];
  readonly hints: readonly string[];
}

export async function checkSchemas(
  options: { modules?: readonly SubgraphModule[]; schemaDir?: string; documentsDir?: string } = {},
): Promise<SchemaCheckResult> {
  const schemaDir = options.schemaDir ?? defaultSchemaDir();
  let composed: ComposedSchemas;
  try {
    composed = await composeSupergraph(options.modules);
  } catch (error) {
    if (!(error instanceof CompositionError)) throw error;
    return {
      ok: false,
      errors: error.errors,
      drift: [],
      invalidDocuments: [],
      breakingChanges: [],
      hints: [],
    };
  }
  const files = schemaFiles(composed);
  const drift: string[] = [];
  for (const [file, content] of files) {
    const committedPath = path.join(schemaDir, file);
    if (!existsSync(committedPath)) drift.push(`schema/${file} is missing`);
    else if (readFileSync(committedPath, 'utf8') !== content)
      drift.push(`schema/${file} differs from a fresh composition`);
  }
  for (const file of graphqlFilesIn(schemaDir)) {
    if (!files.has(file)) drift.push(`schema/${file} is not produced by any subgraph`);
  }
  const committedApiPath = path.join(schemaDir, API_FILE);
  const breaking = existsSync(committedApiPath)
    ? await breakingChanges(readFileSync(committedApiPath, 'utf8'), composed.apiSdl)
    : [];
  const invalidDocuments = validateDocuments(
    buildSchema(composed.apiSdl),
    options.documentsDir ?? defaultDocumentsDir(),
  );
  return {
    ok: drift.length === 0 && invalidDocuments.length === 0,
    errors: [],
    drift,
    invalidDocuments,
    breakingChanges: breaking,
    hints: composed.hints,
  };
}

export interface ComposeIo {
  out(line: string): void;
  err(line: string): void;
}

const STDIO: ComposeIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

const USAGE = 'usage: spend-control compose [--check]';

async function runCheck(io: ComposeIo): Promise<number> {
  const result = await checkSchemas();
  for (const error of result.errors) io.err(`composition error: ${error}`);
  for (const hint of result.hints) io.err(`hint: ${hint}`);
  for (const line of result.drift) io.err(`drift: ${line}`);
  for (const line of result.invalidDocuments) io.err(`invalid persisted document: ${line}`);
  for (const line of result.breakingChanges) io.err(`BREAKING: ${line}`);
  if (result.ok) {
    io.out(
      'compose --check: schema/ matches a fresh composition and every persisted document validates',
    );
    return 0;
  }
  if (result.drift.length > 0)
    io.err('schema/ is out of date: run `spend-control compose` and commit the result');
  return 1;
}

async function runWrite(io: ComposeIo): Promise<number> {
  const schemaDir = defaultSchemaDir();
  const committedApiPath = path.join(schemaDir, API_FILE);
  const previousApi = existsSync(committedApiPath) ? readFileSync(committedApiPath, 'utf8') : null;
  let result: WriteResult;
  try {
    result = await writeSchemas({ schemaDir });
  } catch (error) {
    if (!(error instanceof CompositionError)) throw error;
    for (const line of error.errors) io.err(`composition error: ${line}`);
    return 1;
  }
  for (const hint of result.composed.hints) io.err(`hint: ${hint}`);
  for (const file of result.written) io.out(`wrote schema/${file}`);
  for (const file of result.removed) io.out(`removed stale schema/${file}`);
  if (previousApi !== null) {
    for (const line of await breakingChanges(previousApi, result.composed.apiSdl))
      io.err(`BREAKING: ${line}`);
  }
  const invalid = validateDocuments(buildSchema(result.composed.apiSdl));
  for (const line of invalid) io.err(`invalid persisted document: ${line}`);
  return invalid.length === 0 ? 0 : 1;
}

/** Entry point of `spend-control compose`; returns the process exit code. */
export async function main(argv: readonly string[], io: ComposeIo = STDIO): Promise<number> {
  let check: boolean;
  try {
    check = parseCommandArgs(argv, { check: { type: 'boolean', default: false } }).values.check;
  } catch {
    io.err(USAGE);
    return 2;
  }
  return check ? runCheck(io) : runWrite(io);
}
