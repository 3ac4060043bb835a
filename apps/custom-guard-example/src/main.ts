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
  parseFrontendFlags,
} from '@sluice/frontend';
import { parseOrExit } from '@sluice/cli';

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
  const config = parseOrExit({ prefix: '', usage: FRONTEND_USAGE, parse: parseFrontendFlags });
  await createFrontendApp(config, { policies: [ReservedModelPolicy] });
}

main().catch((err: unknown) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
