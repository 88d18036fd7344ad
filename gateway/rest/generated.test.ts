// The typed edge between REST and GraphQL stays current: GraphQL Code Generator run now over
// gateway/rest/documents against schema/api.graphql (tools/codegen/config.cjs, in its --check mode)
// must find the committed gateway/rest/generated/operations.ts exactly what it would write. A
// document or schema change without `npm run codegen` fails here. The CLI runs as a child process
// (it loads ESM-only modules jest's CommonJS runtime cannot).
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../platform/paths';

const run = promisify(execFile);
const CLI = path.join(projectRoot(), 'node_modules', '.bin', 'graphql-codegen');
const CONFIG = path.join(projectRoot(), 'tools', 'codegen', 'config.cjs');
const GENERATED = path.join(projectRoot(), 'gateway', 'rest', 'generated', 'operations.ts');

async function check(): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(CLI, ['--config', CONFIG, '--check'], {
      cwd: projectRoot(),
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

test('the committed operation types are what codegen writes from the documents now', async () => {
  const result = await check();
  expect(result.output).not.toMatch(/stale/);
  expect(result.code).toBe(0);
});

test('the check fails on a stale file (a document changed without npm run codegen)', async () => {
  const saved = path.join(mkdtempSync(path.join(os.tmpdir(), 'codegen-')), 'operations.ts');
  copyFileSync(GENERATED, saved);
  try {
    writeFileSync(GENERATED, readFileSync(saved, 'utf8').replace('readonly created: boolean', ''));
    const result = await check();
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/stale files were detected/);
  } finally {
    copyFileSync(saved, GENERATED);
    rmSync(path.dirname(saved), { recursive: true, force: true });
  }
});
