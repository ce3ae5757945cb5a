/**
 * The README's "Metrics": its OpenTelemetry block runs as pasted with plain Node (the packages
 * from their dist/) and prints exactly the text block that follows it. The block registers an
 * in-memory reader itself (a MeterProvider of @opentelemetry/sdk-metrics), so that what it
 * prints is what the counter and the histogram recorded: with the API's no-op meter the block
 * would run but prove nothing.
 */
import { describe, expect, it } from 'vitest';
import { codeAndOutput, runBlockWithNode } from './readme-blocks.js';

describe('README "Metrics"', () => {
  it('the OpenTelemetry block runs as pasted with Node and prints the numbers recorded', async () => {
    const { code, output } = await codeAndOutput('Metrics');
    expect(code).toContain("from '@opentelemetry/api'");
    const result = await runBlockWithNode(code, 'metrics');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(output);
  }, 30_000);
});
