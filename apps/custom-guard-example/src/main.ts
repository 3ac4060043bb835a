/**
 * Example of Sluice's extension point (README: "Writing a custom guard"): a frontend with one
 * admission policy of its own. Run: node dist/apps/custom-guard-example/main.js [frontend flags]
 */
import { Injectable } from '@nestjs/common';
import {
  AdmissionPolicy,
  AdmissionRejectedError,
  AdmissionRequest,
  createFrontendApp,
  FRONTEND_USAGE,
  FrontendConfigError,
  parseFrontendFlags,
} from '@sluice/frontend';

/** Models whose name ends in "-70B" are reserved for requests sent with `x-team: batch`. */
@Injectable()
export class ReservedModelPolicy extends AdmissionPolicy {
  readonly name = 'reserved-model';

  admit(request: AdmissionRequest): void {
    if (request.model.endsWith('-70B') && request.headers['x-team'] !== 'batch') {
      throw new AdmissionRejectedError('This model is reserved for the batch team', {
        status: 403,
        type: 'permission_error',
      });
    }
  }
}

async function main(): Promise<void> {
  let config;
  try {
    config = parseFrontendFlags(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof FrontendConfigError)) throw err;
    process.stderr.write(`${err.message}\n${FRONTEND_USAGE}\n`);
    process.exit(2);
  }
  await createFrontendApp(config, { policies: [ReservedModelPolicy] });
}

main().catch((err: unknown) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
