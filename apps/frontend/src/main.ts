import {
  createFrontendApp,
  FRONTEND_USAGE,
  FrontendConfigError,
  parseFrontendFlags,
} from '@sluice/frontend';

async function main(): Promise<void> {
  let config;
  try {
    config = parseFrontendFlags(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof FrontendConfigError)) throw err;
    process.stderr.write(`sluice-frontend: ${err.message}\n${FRONTEND_USAGE}\n`);
    process.exit(2);
  }
  await createFrontendApp(config);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `sluice-frontend: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`,
  );
  process.exit(1);
});
