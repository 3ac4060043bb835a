import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, NatsConnection } from 'nats';
import { FakeEngine, metricSamples } from '@sluice/testkit';
import { quietPort, NATS_URL, spawnApp, uniqueNamespace, waitFor } from './support/processes';

const FIXTURES = join(__dirname, 'fixtures', 'engines', 'llamacpp', '0.7.0');
const routes = () => ({
  '/props': JSON.parse(readFileSync(join(FIXTURES, 'props.json'), 'utf8')) as object,
  '/slots': JSON.parse(readFileSync(join(FIXTURES, 'slots-busy.json'), 'utf8')) as object,
});

const BASE = ['--engine', 'llamacpp', '--nats-url', NATS_URL, '--target', 'http://127.0.0.1:9'];

describe('standalone bridge app (docs/engines.md)', () => {
  describe('flags', () => {
    const cases: [string, string][] = [
      ['--engine', 'triton'],
      ['--scrape-interval-ms', '0'],
      ['--scrape-timeout-ms', 'soon'],
      ['--down-after-ms', '-5'],
      ['--max-num-batched-tokens', '1.5'],
      ['--http-port', '99999'],
      ['--namespace', 'a.b'],
      ['--target', 'localhost:8000'],
      ['--dns-target', 'no-port'],
      ['--llamacpp-kv-cache', 'shared'],
    ];

    it.each(cases)(
      'rejects %s %s with exit code 2, naming the flag and the value',
      async (flag, value) => {
        const args = [...BASE];
        const at = args.indexOf(flag);
        if (at >= 0) args.splice(at, 2);
        const proc = spawnApp('bridge', [...args, flag, value]);
        expect(await proc.exited).toBe(2);
        const firstLine = proc.output.split('\n')[0];
        expect(firstLine).toContain(flag);
        expect(firstLine).toContain(`'${value}'`);
        expect(proc.output).toMatch(/usage:/);
      },
    );

    it('reads the same flags from SLUICE_* variables', async () => {
      const proc = spawnApp('bridge', BASE, { env: { SLUICE_SCRAPE_TIMEOUT_MS: 'abc' } });
      expect(await proc.exited).toBe(2);
      expect(proc.output).toContain('SLUICE_SCRAPE_TIMEOUT_MS: expected');
      expect(proc.output).toContain("'abc'");
    });

    it('exits 2 without any target source, and for an invalid targets file', async () => {
      const none = spawnApp('bridge', ['--engine', 'vllm', '--nats-url', NATS_URL]);
      expect(await none.exited).toBe(2);
      expect(none.output).toMatch(/no targets/);
      const dir = mkdtempSync(join(tmpdir(), 'sluice-bridge-'));
      try {
        writeFileSync(join(dir, 'targets'), 'http://127.0.0.1:9\nnot a url\n');
        const bad = spawnApp('bridge', [
          '--engine',
          'vllm',
          '--nats-url',
          NATS_URL,
          '--targets-file',
          join(dir, 'targets'),
        ]);
        expect(await bad.exited).toBe(2);
        expect(bad.output).toMatch(/--targets-file.*line 2/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('prints its usage for --help', async () => {
      const proc = spawnApp('bridge', ['--help']);
      expect(await proc.exited).toBe(0);
      expect(proc.output).toMatch(/--engine vllm\|sglang\|llamacpp\|tgi/);
    });
  });

  describe('running', () => {
    let nc: NatsConnection;
    let engine: FakeEngine;
    let dir: string;
    beforeAll(async () => {
      nc = await connect({ servers: NATS_URL, name: 'bridge-app-e2e' });
      engine = await FakeEngine.start(routes());
      dir = mkdtempSync(join(tmpdir(), 'sluice-bridge-'));
    });
    afterAll(async () => {
      await engine.close();
      await nc.drain();
      rmSync(dir, { recursive: true, force: true });
    });

    it('serves /metrics and /health, follows its targets file, and says worker_down on SIGTERM', async () => {
      const namespace = uniqueNamespace('bapp');
      const downs: string[] = [];
      const reporters = new Set<string>();
      const sub = nc.subscribe(`namespace.${namespace}.>`);
      void (async () => {
        for await (const m of sub) {
          const p = m.json<{ worker_id: string }>();
          if (m.subject.endsWith('.worker_down')) downs.push(p.worker_id);
          else reporters.add(p.worker_id);
        }
      })();
      await nc.flush();
      const dead = `127.0.0.1:${await quietPort()}`;
      const file = join(dir, 'targets');
      writeFileSync(file, `# fleet\nllama-a=${engine.url}\nhttp://${dead}\n`);
      const proc = spawnApp('bridge', ['--targets-file', file], {
        env: {
          SLUICE_ENGINE: 'llamacpp',
          SLUICE_NATS_URL: NATS_URL,
          SLUICE_NAMESPACE: namespace,
          SLUICE_HTTP_HOST: '127.0.0.1',
          SLUICE_HTTP_PORT: '0',
          SLUICE_SCRAPE_INTERVAL_MS: '100',
          SLUICE_DOWN_AFTER_MS: '500',
        },
      });
      try {
        const [, ops] = await proc.waitForOutput(
          /bridge for llamacpp engines .* nats:\/\/.* namespace .*\/health at (http:\/\/\S+)/,
        );
        await waitFor(() => reporters.has('llama-a'), 'reports from llama-a');

        const health = await fetch(`${ops}/health`);
        expect(health.status).toBe(200);
        const body = (await health.json()) as {
          workers: { workerId: string; up: boolean; engine: string; url: string }[];
        };
        expect(body.workers).toEqual(
          expect.arrayContaining([
            expect.objectContaining({
              workerId: 'llama-a',
              up: true,
              engine: 'llamacpp',
              url: engine.url,
            }),
            expect.objectContaining({ workerId: dead, up: false }),
          ]),
        );
        await waitFor(() => downs.includes(dead), 'worker_down for the dead target');

        const metrics = await (await fetch(`${ops}/metrics`)).text();
        expect(
          metricSamples(metrics, 'sluice_bridge_scrapes_total', {
            worker_id: 'llama-a',
            result: 'ok',
          })[0],
        ).toBeGreaterThan(0);
        expect(
          metricSamples(metrics, 'sluice_bridge_scrapes_total', {
            worker_id: dead,
            result: 'error',
          })[0],
        ).toBeGreaterThan(0);
        const age = metricSamples(metrics, 'sluice_bridge_report_age_seconds', {
          worker_id: 'llama-a',
        });
        expect(age).toHaveLength(1);
        expect(age[0]).toBeGreaterThanOrEqual(0);
        expect((await fetch(`${ops}/nope`)).status).toBe(404);

        // The file changes: llama-a leaves (worker_down, series gone), llama-b arrives.
        writeFileSync(file, `llama-b=${engine.url}\n`);
        await waitFor(
          () => reporters.has('llama-b') && downs.includes('llama-a'),
          'reload of the targets file',
        );
        const after = await (await fetch(`${ops}/metrics`)).text();
        expect(after).not.toMatch(/worker_id="llama-a"/);

        expect(await proc.stop('SIGTERM')).toBe(0);
        await waitFor(
          () => downs.filter((d) => d === 'llama-b').length === 1,
          'worker_down for llama-b at SIGTERM',
        );
        expect(proc.output).not.toMatch(/ERROR/);
      } finally {
        sub.unsubscribe();
        await proc.stop();
      }
    });
  });
});
