import { builtinModules } from 'node:module';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { createIpoHandler } from './handler.js';
import { referenceStore } from './testing/reference-store.js';

// The core runs on Node, Bun, Deno and Workers: its sources use Web-standard APIs only. Each
// non-test source file is parsed (so comments and strings never count) and every use of a
// Node-only API is listed as `file:line: what`. src/testing/** and src/testing.ts (the
// vitest suites, which need Node) are left out, and so is src/node.ts (`@ipokit/core/node`, the
// Node-only entry point), which no other source may import.

const SRC = fileURLToPath(new URL('.', import.meta.url));
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

async function coreSources(): Promise<string[]> {
  const files = (await readdir(SRC, { recursive: true })).map((f) => f.replaceAll('\\', '/'));
  return files
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
    .filter((f) => f !== 'testing.ts' && !f.startsWith('testing/') && !/(^|\/)test-[^/]*\.ts$/.test(f))
    // @ipokit/core/node: Node's own transport, which nothing else in the core imports (checked
    // below) but platform/node.ts, the `#platform` import that only Node resolves to; and
    // crypto/node.ts, the `#crypto` import that only Node resolves to (node:crypto)
    .filter((f) => f !== 'node.ts' && f !== 'platform/node.ts' && f !== 'crypto/node.ts')
    .sort();
}

describe('the core is runtime-neutral', () => {
  it('no non-test source of packages/core/src imports node: modules or uses Buffer, process, require', async () => {
    const files = await coreSources();
    expect(files).toContain('handler.ts');
    expect(files).toContain('keys.ts');
    const uses: string[] = [];
    for (const file of files) {
      for (const use of nodeOnlyUses(file, await readFile(join(SRC, file), 'utf8'))) uses.push(`packages/core/src/${file}:${use}`);
    }
    expect(uses, 'Node-only APIs in the core: use Web-standard ones (TextEncoder, crypto.getRandomValues, ...)').toEqual([]);
  });

  it('#platform resolves to platform/node.ts on Node only: the default condition is platform/web.ts, which imports nothing of Node', async () => {
    const pkg = JSON.parse(await readFile(join(SRC, '..', 'package.json'), 'utf8')) as { imports: Record<string, Record<string, Record<string, string>>> };
    const platform = pkg.imports['#platform']!;
    expect(Object.keys(platform)).toEqual(['node', 'default']);
    expect(platform.node!.source).toBe('./src/platform/node.ts');
    expect(platform.default!.source).toBe('./src/platform/web.ts');
    expect(await coreSources()).toContain('platform/web.ts');
  });

  it('#crypto resolves to crypto/node.ts on Node only: the default condition is crypto/web.ts, which imports nothing of Node', async () => {
    const pkg = JSON.parse(await readFile(join(SRC, '..', 'package.json'), 'utf8')) as { imports: Record<string, Record<string, Record<string, string>>> };
    const hashes = pkg.imports['#crypto']!;
    expect(Object.keys(hashes)).toEqual(['node', 'default']);
    expect(hashes.node).toEqual({ source: './src/crypto/node.ts', import: './dist/crypto-node.js', require: './dist/crypto-node.cjs' });
    expect(hashes.default).toEqual({ source: './src/crypto/web.ts', import: './dist/crypto-web.js', require: './dist/crypto-web.cjs' });
    expect(await coreSources()).toContain('crypto/web.ts');
    // nothing imports the Node file but through `#crypto`
    const importers: string[] = [];
    for (const file of await coreSources()) if (/crypto\/node(\.js)?'/.test(await readFile(join(SRC, file), 'utf8'))) importers.push(file);
    expect(importers).toEqual([]);
  });

  it('no source but the entry points themselves imports src/node.ts', async () => {
    const importers: string[] = [];
    for (const file of await coreSources()) if (/from '\.\/node\.js'|from '\.\.\/node\.js'/.test(await readFile(join(SRC, file), 'utf8'))) importers.push(file);
    expect(importers).toEqual([]);
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

describe('the Web-API replacements agree with Node', () => {
  // handler.ts measures UTF-8 bytes with TextEncoder.encodeInto, 16 KiB at a time: the
  // maxUrlLength bound falls exactly where Buffer.byteLength says, for any text, across
  // the slices (a surrogate pair on a slice boundary included).
  it('maxUrlLength counts the bytes Buffer.byteLength counts, for any text and length', async () => {
    const store = referenceStore();
    const answers = async (url: string, maxUrlLength: number): Promise<number> =>
      (await createIpoHandler(store, { maxUrlLength })({ method: 'GET', url, path: '/', query: '', headers: {}, clientAddress: '203.0.113.9' })).status;
    const piece = fc.constantFrom('a', 'é', '€', '😀', '\uD800', '\uDC00', '%20');
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 40 }), fc.oneof(fc.constant(0), fc.integer({ min: 16_350, max: 16_376 }), fc.constant(40_000)), async (pieces, pad) => {
        const url = `/ipos?x=${'b'.repeat(pad)}${pieces.join('')}`;
        const bytes = Buffer.byteLength(url, 'utf8');
        expect(await answers(url, bytes)).not.toBe(414);
        expect(await answers(url, bytes - 1)).toBe(414);
      }),
      { numRuns: 200 },
    );
  });
});
