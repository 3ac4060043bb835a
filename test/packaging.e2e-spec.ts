import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { bridgeEnvName, BridgeFlags, parseBridgeFlags } from '@sluice/bridge';
import { parseFrontendFlags } from '@sluice/frontend';
import { parseWorkerFlags } from '@sluice/sim-worker';

/**
 * The container and Kubernetes files start the bridge with flags that no build or type check
 * reads: a renamed flag, a target pointing at a worker that does not speak the engine's format,
 * or a NATS URL other than the frontends' would leave the frontends without load reports and
 * show no error anywhere. This test parses those command lines with the bridge's and the
 * worker's own flag parsers and follows every reference between the files. No Docker needed.
 */

const ROOT = join(__dirname, '..');
const read = (...path: string[]): string => readFileSync(join(ROOT, ...path), 'utf8');
// js-yaml ships no type declarations; it is in node_modules through eslint and @nestjs/swagger.
const yaml = createRequire(__filename)('js-yaml') as {
  load(text: string): unknown;
  loadAll(text: string): unknown[];
};

// Parsed YAML, walked along the paths these files must have: a missing one fails the test.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;
type Env = Record<string, string>;

/** Dockerfile instructions of the last stage (the runtime image), backslash lines joined. */
function runtimeStage(dockerfile: string): { stages: string[]; final: Map<string, string[]> } {
  const lines = dockerfile.replace(/\\\n\s*/g, ' ').split('\n');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const final = new Map<string, string[]>();
  for (const line of lines.slice(lines.findLastIndex((l) => l.startsWith('FROM ')))) {
    const m = /^([A-Z]+)\s+(.*)$/.exec(line);
    if (m) final.set(m[1], [...(final.get(m[1]) ?? []), m[2]]);
  }
  return { stages, final };
}

/** A stage without its comments, to compare stages across Dockerfiles. */
const code = (stage: string): string => stage.replace(/^#.*\n/gm, '').trim();

/** `KEY=value` lists (Kubernetes env, compose list form) or maps, as an environment. */
function envOf(env: Obj[] | Obj | undefined): Env {
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((e): [string, string] => [String(e.name), String(e.value)]));
  }
  return Object.fromEntries(Object.entries(env ?? {}).map(([k, v]) => [k, String(v)]));
}

describe('docker/bridge.Dockerfile', () => {
  const bridge = runtimeStage(read('docker', 'bridge.Dockerfile'));
  const frontend = runtimeStage(read('docker', 'frontend.Dockerfile'));
  const defaults = parseBridgeFlags(['--engine=vllm', '--target=http://e:8000'], {
    SLUICE_NATS_URL: 'nats://n:4222',
  });

  it('builds like the other images, from the same Node base', () => {
    const base = /^ARG NODE_IMAGE=.*$/m;
    expect(read('docker', 'bridge.Dockerfile').match(base)?.[0]).toBe(
      read('docker', 'frontend.Dockerfile').match(base)?.[0],
    );
    expect(read('docker', 'worker.Dockerfile').match(base)?.[0]).toMatch(/node:24/);
    // Same build and deps stages: one build fills the layer cache for all three images.
    expect(bridge.stages.slice(0, 2).map(code)).toEqual(frontend.stages.slice(0, 2).map(code));
  });

  it('runs the bridge app as a non-root user', () => {
    const entry = JSON.parse(bridge.final.get('ENTRYPOINT')?.[0] ?? '[]') as string[];
    expect(entry).toEqual(['node', 'dist/apps/bridge/main.js']);
    expect(existsSync(join(ROOT, 'apps', 'bridge', 'src', 'main.ts'))).toBe(true);
    expect(bridge.final.get('USER')).toEqual(['1000:1000']);
  });

  it('exposes and health-checks the port the bridge listens on', () => {
    const env = bridge.final.get('ENV')?.join(' ') ?? '';
    const port = /SLUICE_HTTP_PORT=(\d+)/.exec(env)?.[1];
    expect(Number(port)).toBe(defaults.httpPort);
    expect(bridge.final.get('EXPOSE')).toEqual([port]);
    const check = bridge.final.get('HEALTHCHECK')?.[0] ?? '';
    const cmd = JSON.parse(/CMD (\[.*\])$/.exec(check)?.[1] ?? '[]') as string[];
    // healthcheck.js <path> <port flag> <port variable> <default port>
    expect(cmd).toEqual([
      'node',
      '/app/docker/healthcheck.js',
      '/health',
      '--http-port',
      bridgeEnvName('http-port'),
      port,
    ]);
    expect(bridge.final.get('COPY')).toContain('docker/healthcheck.js ./docker/healthcheck.js');
  });
});

describe('docker/docker-compose.yml', () => {
  const compose = yaml.load(read('docker', 'docker-compose.yml')) as Obj;
  const services = compose.services as Record<string, Obj>;
  const frontendEnv = envOf(compose['x-frontend'].environment);
  const bridges = Object.entries(services).filter(
    ([, s]) => s.build?.dockerfile === 'docker/bridge.Dockerfile',
  );
  const prometheus = yaml.load(read('deploy', 'prometheus', 'prometheus.yml')) as Obj;
  const scraped = (prometheus.scrape_configs as Obj[]).flatMap((job) =>
    (job.static_configs as Obj[]).flatMap((c) => c.targets as string[]),
  );

  it('keeps every simulated worker startable', () => {
    const workers = Object.values(services).filter((s) => s.image === 'sluice-worker:dev');
    expect(workers.length).toBeGreaterThanOrEqual(5);
    for (const w of workers) expect(() => parseWorkerFlags(w.command)).not.toThrow();
  });

  it('runs a bridge, reporting on the frontends’ NATS and namespace', () => {
    expect(bridges.map(([name]) => name)).toEqual(['bridge-vllm']);
    for (const [, service] of bridges) {
      const flags = parseBridgeFlags(service.command, envOf(service.environment));
      expect(flags.natsUrl).toBe(frontendEnv.SLUICE_NATS_URL);
      expect(flags.namespace).toBe(frontendEnv.SLUICE_NAMESPACE ?? 'dynamo');
      expect(service.depends_on.nats).toEqual({ condition: 'service_healthy' });
    }
  });

  it('points the bridge at workers that serve only the engine’s format', () => {
    for (const [, service] of bridges) {
      const flags = parseBridgeFlags(service.command, envOf(service.environment));
      expect(flags.targets.length).toBeGreaterThanOrEqual(2);
      for (const spec of flags.targets) {
        const url = new URL(spec.slice(spec.indexOf('=') + 1));
        expect(Object.keys(services)).toContain(url.hostname);
        const worker = parseWorkerFlags(services[url.hostname].command);
        expect({ spec, format: worker.metricsFormat, nats: worker.natsUrl }).toEqual({
          spec,
          format: flags.engine,
          // A stock engine publishes nothing itself: the bridge is its only reporter.
          nats: undefined,
        });
        expect([worker.host, worker.port]).toEqual(['0.0.0.0', Number(url.port)]);
        expect(flags.maxNumBatchedTokens).toBe(worker.maxNumBatchedTokens);
      }
    }
  });

  it('publishes the bridge’s port and has Prometheus scrape it', () => {
    for (const [name, service] of bridges) {
      const flags = parseBridgeFlags(service.command, envOf(service.environment));
      expect(service.ports).toEqual([`\${SLUICE_BIND_ADDRESS:-127.0.0.1}:9400:${flags.httpPort}`]);
      expect(scraped).toContain(`${name}:${flags.httpPort}`);
      expect(services.prometheus.depends_on).toContain(name);
    }
  });
});

describe('deploy/k8s/examples/vllm', () => {
  const dir = join('deploy', 'k8s', 'examples', 'vllm');
  const kustomization = yaml.load(read(dir, 'kustomization.yaml')) as Obj;
  const docs = (kustomization.resources as string[]).flatMap(
    (file) => yaml.loadAll(read(dir, file)) as Obj[],
  );
  const find = (kind: string, name: string): Obj | undefined =>
    docs.find((d) => d.kind === kind && d.metadata.name === name);
  const podOf = (deployment: Obj): Obj => deployment.spec.template.spec as Obj;
  const containerPort = (container: Obj, port: string | number): number | undefined =>
    typeof port === 'number'
      ? port
      : ((container.ports as Obj[]).find((p) => p.name === port)?.containerPort as number);

  const bridge = find('Deployment', 'sluice-bridge-vllm') as Obj;
  const bridgeContainer = podOf(bridge).containers[0] as Obj;
  const flags: BridgeFlags = parseBridgeFlags(bridgeContainer.args, envOf(bridgeContainer.env));
  const baseConfig = yaml.load(read('deploy', 'k8s', 'frontend-config.yaml')) as Obj;

  it('runs the bridge with flags it accepts, on the frontends’ NATS and namespace', () => {
    expect(bridgeContainer.image).toBe('sluice-bridge');
    expect(flags.engine).toBe('vllm');
    expect(flags.natsUrl).toBe(baseConfig.data.SLUICE_NATS_URL);
    expect(flags.namespace).toBe(baseConfig.data.SLUICE_NAMESPACE);
    const images = (kustomization.images as Obj[]).map((i) => String(i.name));
    expect(images).toEqual(expect.arrayContaining(['sluice-bridge', 'vllm/vllm-openai']));
  });

  it('finds the vLLM pods through a headless Service of their namespace', () => {
    expect(flags.dnsTargets).toHaveLength(1);
    const [name, port] = flags.dnsTargets[0].split(':');
    const [serviceName, namespace = kustomization.namespace] = name.split('.');
    expect(namespace).toBe(kustomization.namespace);
    const service = find('Service', serviceName) as Obj;
    expect(service.spec.clusterIP).toBe('None');
    const servicePort = (service.spec.ports as Obj[]).find((p) => p.port === Number(port)) as Obj;
    const vllm = docs.find(
      (d) =>
        d.kind === 'Deployment' &&
        Object.entries(service.spec.selector as Env).every(
          ([k, v]) => d.spec.template.metadata.labels[k] === v,
        ),
    ) as Obj;
    const engine = podOf(vllm).containers[0] as Obj;
    expect(engine.image).toBe('vllm/vllm-openai');
    expect(containerPort(engine, servicePort.targetPort)).toBe(Number(port));
    expect(engine.args).toContain(`--port=${port}`);
    expect(engine.args).toContain(`--max-num-batched-tokens=${flags.maxNumBatchedTokens}`);
    expect(engine.readinessProbe.httpGet.path).toBe('/health');
    expect(containerPort(engine, engine.readinessProbe.httpGet.port)).toBe(Number(port));
    expect(engine.resources.limits['nvidia.com/gpu']).toBeGreaterThanOrEqual(1);
  });

  it('probes the bridge’s /health on the port it listens on, as a non-root user', () => {
    for (const probe of [bridgeContainer.readinessProbe, bridgeContainer.livenessProbe]) {
      expect(probe.httpGet.path).toBe('/health');
      expect(containerPort(bridgeContainer, probe.httpGet.port)).toBe(flags.httpPort);
    }
    expect(podOf(bridge).securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    expect(bridgeContainer.resources.limits.memory).toBeDefined();
  });

  it('has the bridge’s /metrics scraped', () => {
    const service = find('Service', 'sluice-bridge-vllm') as Obj;
    expect(service.spec.selector).toEqual(bridge.spec.selector.matchLabels);
    const monitor = find('ServiceMonitor', 'sluice-bridge-vllm') as Obj;
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    const endpoint = monitor.spec.endpoints[0] as Obj;
    expect(endpoint.path).toBe('/metrics');
    const port = (service.spec.ports as Obj[]).find((p) => p.name === endpoint.port) as Obj;
    expect(containerPort(bridgeContainer, port.targetPort)).toBe(flags.httpPort);
  });
});

/** Every document of a kustomization's resources (files only, as these are). */
function kustomized(dir: string): { kustomization: Obj; docs: Obj[] } {
  const kustomization = yaml.load(read(dir, 'kustomization.yaml')) as Obj;
  const docs = (kustomization.resources as string[]).flatMap(
    (file) => yaml.loadAll(read(dir, file)) as Obj[],
  );
  return { kustomization, docs };
}

/** `$(VAR)` in container args, as the kubelet expands them from the container's env. */
const expand = (args: string[], values: Env): string[] =>
  args.map((a) => a.replace(/\$\(([A-Z_]+)\)/g, (_, name: string) => values[name] ?? ''));

describe('deploy/k8s', () => {
  const base = kustomized(join('deploy', 'k8s'));
  const config = base.docs.find((d) => d.kind === 'ConfigMap') as Obj;

  it('deploys the frontends and what they need, no simulated worker', () => {
    const workloads = base.docs.filter((d) => ['Deployment', 'StatefulSet'].includes(d.kind));
    expect(workloads.map((d) => String(d.metadata.name))).toEqual(['sluice-frontend']);
    const images = (base.kustomization.images as Obj[]).map((i) => String(i.name));
    expect(images).toEqual(['sluice-frontend']);
    expect(() => parseFrontendFlags([], config.data as Env)).not.toThrow();
  });

  it('has an example overlay whose simulated workers report to the frontends', () => {
    const example = kustomized(join('deploy', 'k8s', 'examples', 'simulated-workers'));
    expect(example.kustomization.namespace).toBe(base.kustomization.namespace);
    const workers = example.docs.find((d) => d.kind === 'Deployment') as Obj;
    const container = workers.spec.template.spec.containers[0] as Obj;
    expect(container.image).toBe('sluice-worker');
    const pod = { POD_NAME: 'sluice-worker-0', POD_IP: '10.0.0.7' };
    const options = parseWorkerFlags(expand(container.args as string[], pod));
    expect(options.natsUrl).toBe(config.data.SLUICE_NATS_URL);
    expect(options.namespace).toBe(config.data.SLUICE_NAMESPACE);
    expect(options.advertiseUrl).toBe(`http://${pod.POD_IP}:${options.port}`);
  });
});
