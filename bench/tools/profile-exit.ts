/**
 * Preloaded (`node -r`) into a frontend run under `--cpu-prof`: Node writes the profile only on
 * a normal exit, and the frontend's own shutdown re-raises the signal, so the bench asks for an
 * exit with SIGUSR2 instead.
 */
process.on('SIGUSR2', () => process.exit(0));
