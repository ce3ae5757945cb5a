import { builtinModules } from 'node:module';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// @ipokit/core, @ipokit/webhooks and @ipokit/sources run on Node, Bun, Deno and Workers: their sources use
// Web-standard APIs only. Each non-test source file is parsed (so comments and strings never
// count) and every use of a Node-only API is listed as `file:line: what`. Left out: the files
// only Node resolves to through the packages' `imports` conditions (`#crypto`, `#platform`)
// and the src/node.ts of webhooks and sources (their Node-only entry points), which no
// other source imports (checked below).

const PACKAGES = fileURLToPath(new URL('../packages/', import.meta.url));
/** The Node-only files of each package, as paths under its src/. */
const NODE_ONLY: Record<'core' | 'webhooks' | 'sources', readonly string[]> = {
  core: ['crypto/node.ts'],
  webhooks: ['node.ts', 'platform/node.ts'],
  sources: ['node.ts'],
};
const BUILTINS = new Set(builtinModules);
/** Node's own globals: none exists on Workers or Deno (Deno has process and Buffer only through node: imports). */
const NODE_GLOBALS = new Set(['Buffer', 'process', 'require', '__dirname', '__filename', 'global', 'setImmediate', 'clearImmediate', 'NodeJS']);

/** The Node-only uses in one file's text, as `line: what`. */
function nodeOnlyUses(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const at = (node: ts.Node, what: string): void => {
    found.push(`${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${what}`);
  };
  const checkSpecifier = (node: ts.Node, specifier: ts.Expression | undefined): void => {
    if (specifier === undefined || !ts.isStringLiteralLike(specifier)) return;
    const name = specifier.text;
    if (name.startsWith('node:') || BUILTINS.has(name) || BUILTINS.has(name.split('/')[0]!)) at(node, `imports ${JSON.stringify(name)}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) checkSpecifier(node, node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) checkSpecifier(node, node.moduleReference.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) checkSpecifier(node, node.argument.literal as ts.Expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) checkSpecifier(node, node.arguments[0]);
    else if (ts.isIdentifier(node) && NODE_GLOBALS.has(node.text) && isReference(node)) {
      const parent = node.parent;
      const shown = ts.isPropertyAccessExpression(parent) && parent.expression === node ? `${node.text}.${parent.name.text}` : ts.isCallExpression(parent) && parent.expression === node ? `${node.text}(` : node.text;
      at(node, `uses ${shown}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Whether an identifier names a variable in scope (a global when nothing declares it), as
 * opposed to a property name (`x.process`, `{ process: 1 }`) or a declaration's own name.
 */
function isReference(node: ts.Identifier): boolean {
  const parent = node.parent;
  if ((ts.isPropertyAccessExpression(parent) || ts.isQualifiedName(parent)) && (ts.isPropertyAccessExpression(parent) ? parent.name : parent.right) === node) return false;
  if ((ts.isPropertyAssignment(parent) || ts.isPropertySignature(parent) || ts.isPropertyDeclaration(parent) || ts.isMethodDeclaration(parent) || ts.isMethodSignature(parent)) && parent.name === node) return false;
  if ((ts.isVariableDeclaration(parent) || ts.isParameter(parent) || ts.isFunctionDeclaration(parent) || ts.isBindingElement(parent)) && parent.name === node) return false;
  return true;
}

/** A package's non-test sources but its Node-only files, as paths under its src/. */
async function neutralSources(pkg: keyof typeof NODE_ONLY): Promise<string[]> {
  const files = (await readdir(join(PACKAGES, pkg, 'src'), { recursive: true })).map((f) => f.replaceAll('\\', '/'));
  return files
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts') && !/(^|\/)test-[^/]*\.ts$/.test(f))
    .filter((f) => !NODE_ONLY[pkg].includes(f))
    .sort();
}

/** A package's `imports` field. */
async function importsOf(pkg: string): Promise<Record<string, Record<string, Record<string, string>>>> {
  return (JSON.parse(await readFile(join(PACKAGES, pkg, 'package.json'), 'utf8')) as { imports: Record<string, Record<string, Record<string, string>>> }).imports;
}

describe('the core is runtime-neutral', () => {
  for (const pkg of ['core', 'webhooks', 'sources'] as const) {
    it(`no non-test source of packages/${pkg}/src imports node: modules or uses Buffer, process, require`, async () => {
      const files = await neutralSources(pkg);
      expect(files).toContain({ core: 'http/handler.ts', webhooks: 'worker.ts', sources: 'collector.ts' }[pkg]);
      const uses: string[] = [];
      for (const file of files) {
        for (const use of nodeOnlyUses(file, await readFile(join(PACKAGES, pkg, 'src', file), 'utf8'))) uses.push(`packages/${pkg}/src/${file}:${use}`);
      }
      expect(uses, 'Node-only APIs: use Web-standard ones (TextEncoder, crypto.getRandomValues, ...)').toEqual([]);
    });

    it(`no source of packages/${pkg}/src imports a Node-only file but through its import condition`, async () => {
      const importers: string[] = [];
      for (const file of await neutralSources(pkg)) {
        const text = await readFile(join(PACKAGES, pkg, 'src', file), 'utf8');
        if (/from '(\.\.?\/)+(crypto\/|platform\/)?node\.js'/.test(text)) importers.push(file);
      }
      expect(importers).toEqual([]);
    });
  }

  it('webhooks: #platform resolves to platform/node.ts on Node only: the default condition is platform/web.ts, which imports nothing of Node', async () => {
    const platform = (await importsOf('webhooks'))['#platform']!;
    expect(Object.keys(platform)).toEqual(['node', 'default']);
    expect(platform.node).toEqual({ source: './src/platform/node.ts', import: './dist/platform-node.js', require: './dist/platform-node.cjs' });
    expect(platform.default).toEqual({ source: './src/platform/web.ts', import: './dist/platform-web.js', require: './dist/platform-web.cjs' });
    expect(await neutralSources('webhooks')).toContain('platform/web.ts');
  });

  it('core: #crypto resolves to crypto/node.ts on Node only: the default condition is crypto/web.ts, which imports nothing of Node', async () => {
    const hashes = (await importsOf('core'))['#crypto']!;
    expect(Object.keys(hashes)).toEqual(['node', 'default']);
    expect(hashes.node).toEqual({ source: './src/crypto/node.ts', import: './dist/crypto-node.js', require: './dist/crypto-node.cjs' });
    expect(hashes.default).toEqual({ source: './src/crypto/web.ts', import: './dist/crypto-web.js', require: './dist/crypto-web.cjs' });
    expect(await neutralSources('core')).toContain('crypto/web.ts');
  });

  it('the check finds each kind of Node-only use, with its line, and nothing in comments, strings or property names', () => {
    const text = [
      "import { createHash } from 'node:crypto';", // 1
      "import type { IncomingMessage } from 'http';", // 2
      "export { readFile } from 'fs/promises';", // 3
      "const fs = await import('node:fs');", // 4
      'const n = Buffer.byteLength(s);', // 5
      'const env = process.env.X;', // 6
      "const m = require('x');", // 7
      'let b: Buffer | undefined;', // 8
      "// import x from 'node:fs'; Buffer.from(process.env) require('x')", // 9
      "const text = 'process.env and Buffer and node:fs';", // 10
      'const o = { process: 1, Buffer: 2 }; o.process; o.Buffer;', // 11
      "import { memoryStore } from '@ipokit/storage-memory';", // 12
      'type T = import("node:events").EventEmitter;', // 13
      'const t: NodeJS.Timeout | undefined = undefined;', // 14
    ].join('\n');
    expect(nodeOnlyUses('sample.ts', text)).toEqual([
      '1: imports "node:crypto"',
      '2: imports "http"',
      '3: imports "fs/promises"',
      '4: imports "node:fs"',
      '5: uses Buffer.byteLength',
      '6: uses process.env',
      '7: uses require(',
      '8: uses Buffer',
      '13: imports "node:events"',
      '14: uses NodeJS',
    ]);
  });
});
