import { parseOrExit } from '@sluice/cli';
import { createFrontendApp, FRONTEND_USAGE, parseFrontendFlags } from '@sluice/frontend';

async function main(): Promise<void> {
  const config = parseOrExit({
    prefix: 'sluice-frontend',
    usage: FRONTEND_USAGE,
    parse: parseFrontendFlags,
  });
  await createFrontendApp(config);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `sluice-frontend: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`,
  );
  process.exit(1);
});
