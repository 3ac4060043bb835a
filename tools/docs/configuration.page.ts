import { formatFlagReference, type FlagTable } from '@sluice/cli';
import { BRIDGE_FLAGS } from '../../libs/bridge/src/config/parse-bridge-flags';
import { FRONTEND_FLAGS } from '../../libs/frontend/src/config/frontend-flags';
import { WORKER_FLAGS } from '../../libs/sim-worker/src/config/worker-flags.parser';
import { EMBEDDED_ENV } from '../../apps/embedded/src/embedded-env';
import { LOADGEN_FLAGS } from '../../apps/loadgen/src/loadgen.options';
import { MIGRATE_FLAGS } from '../../apps/migrate/src/migrate.options';
import { GENERATED_NOTE } from './generated-note';

interface AppSection {
  readonly title: string;
  readonly about: string;
  readonly table: FlagTable;
  /** The prefix of the app's variables; undefined: the app reads flags only. */
  readonly envPrefix?: string;
}

const SECTIONS: readonly AppSection[] = [
  {
    title: 'Frontend',
    about:
      '`node dist/apps/frontend/main.js [flags]`, the `sluice-frontend` image, and `npm start` ' +
      '(which gives its flags to the frontend it embeds). Per-model values of the threshold ' +
      'flags are set over HTTP (docs/api.md, "Busy thresholds"); a flag is the global default.',
    table: FRONTEND_FLAGS,
    envPrefix: 'SLUICE_',
  },
  {
    title: 'Engine bridge',
    about:
      '`node dist/apps/bridge/main.js [flags]` and the `sluice-bridge` image: scrapes stock ' +
      'engines and publishes their load on NATS (docs/engines.md). Inside the frontend the ' +
      'same bridge runs with `--engine-target` and the defaults below.',
    table: BRIDGE_FLAGS,
    envPrefix: 'SLUICE_',
  },
  {
    title: 'Simulated worker',
    about:
      '`node dist/apps/worker/main.js [flags]` and the `sluice-worker` image: an ' +
      'OpenAI-compatible server with a simulated engine, for demos and tests. It reads no ' +
      'variables.',
    table: WORKER_FLAGS,
  },
  {
    title: 'Load generator',
    about:
      '`npm run loadgen -- [flags]`: sends an open-loop stream of requests and prints what ' +
      'came back. It reads no variables.',
    table: LOADGEN_FLAGS,
  },
  {
    title: 'Migrations',
    about:
      '`node dist/apps/migrate/main.js run|revert [flags]` (`npm run migration:run`, ' +
      "`npm run migration:revert`): applies or reverts the threshold store's schema.",
    table: MIGRATE_FLAGS,
    envPrefix: 'SLUICE_',
  },
];

const INTRO = `# Configuration

${GENERATED_NOTE}

Every setting of every Sluice process, by process. A flag is given as \`--name value\` or
\`--name=value\`. Where a process reads the environment, each flag also has a variable,
\`SLUICE_\` and the flag's name in upper snake case (\`--router-mode\` → \`SLUICE_ROUTER_MODE\`);
the flag wins over its variable, and a repeatable flag's variable takes a comma-separated list.
An invalid value stops the process with exit code 2 and a message naming the flag (or variable)
and the value. \`--help\` prints the same list.

Container images, Kubernetes and compose add a few settings of their own: docs/deployment.md.`;

function embeddedSection(): string {
  const rows = Object.values(EMBEDDED_ENV).map(
    (v) => `| \`${v.name}\` | ${v.default === undefined ? 'unset' : v.default} | ${v.help} |`,
  );
  return [
    '## `npm start`',
    '',
    'The frontend and simulated workers in one process, on the embedded database and an',
    'in-process bus unless `--nats-url` or `--database-url` is given. Flags after `--` go to the',
    'frontend (above); these variables shape the workers:',
    '',
    '| variable | default | meaning |',
    '| --- | --- | --- |',
    ...rows,
  ].join('\n');
}

function appSection(s: AppSection): string {
  return [`## ${s.title}`, '', s.about, '', formatFlagReference(s.table, s.envPrefix)].join('\n');
}

/** docs/configuration.md, from the apps' flag tables. */
export function configurationPage(): string {
  const [frontend, ...rest] = SECTIONS;
  const parts = [INTRO, appSection(frontend), embeddedSection(), ...rest.map(appSection)];
  return `${parts.join('\n\n')}\n`;
}
