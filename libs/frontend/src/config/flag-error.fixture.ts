import { FrontendConfigError } from './frontend-config.error';
import { parseFrontendFlags } from './parse-frontend-flags';

/** For specs: the usage error `parseFrontendFlags` throws for these flags (fails if it accepts them). */
export const errorOf = (argv: string[], env: NodeJS.ProcessEnv = {}): FrontendConfigError => {
  try {
    parseFrontendFlags(argv, env);
  } catch (err) {
    if (err instanceof FrontendConfigError) return err;
    throw err;
  }
  throw new Error(`expected ${argv.join(' ')} to be rejected`);
};
