import { Logger } from '@nestjs/common';
import {
  BRIDGE_USAGE,
  BridgeFlags,
  EngineBridge,
  parseBridgeFlags,
  startBridgeOpsServer,
  TargetSpecError,
} from '@sluice/bridge';
import { NatsEventPublisher } from '@sluice/bus';
import { CommandLine, exitWithUsage, parseOrExit, stopOnSignals } from '@sluice/cli';
import { redactCredentials } from '@sluice/contracts';
import { collectDefaultMetrics, Registry } from 'prom-client';

const COMMAND_LINE: CommandLine<BridgeFlags> = {
  prefix: 'error',
  usage: BRIDGE_USAGE,
  parse: parseBridgeFlags,
};

function describe(f: BridgeFlags, opsUrl: string): string {
  const sources = [
    ...f.targets.map((t) => `--target ${t}`),
    ...(f.targetsFile ? [`--targets-file ${f.targetsFile}`] : []),
    ...f.dnsTargets.map((d) => `--dns-target ${d}`),
  ].join(' ');
  return (
    `bridge for ${f.engine} engines (${sources}) every ${f.scrapeIntervalMs} ms, ` +
    `timeout ${f.scrapeTimeoutMs} ms, down after ${f.downAfterMs} ms; reports on ` +
    `${redactCredentials(f.natsUrl)} namespace ${f.namespace}; /metrics and /health at ${opsUrl}`
  );
}

async function main(): Promise<void> {
  const flags = parseOrExit(COMMAND_LINE);
  Logger.overrideLogger(['log', 'error', 'warn']);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const publisher = await NatsEventPublisher.connect(flags.natsUrl, `sluice-bridge-${process.pid}`);
  const bridge = new EngineBridge({ ...flags, publisher, registry });
  try {
    await bridge.start();
  } catch (err) {
    await publisher.close();
    if (err instanceof TargetSpecError) {
      exitWithUsage(COMMAND_LINE, `--targets-file: ${err.message}`);
    }
    throw err;
  }
  const ops = await startBridgeOpsServer({
    host: flags.httpHost,
    port: flags.httpPort,
    registry,
    bridge,
  });
  process.stdout.write(`${describe(flags, ops.url)}\n`);

  stopOnSignals(async () => {
    // stop() publishes worker_down for every live worker; draining makes sure it leaves.
    await bridge.stop();
    await publisher.close();
    await ops.close();
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`bridge failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
