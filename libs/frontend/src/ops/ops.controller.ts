import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ThresholdRepository } from '../thresholds/persistence';
import { BusStateService } from './bus-state.service';

const PING_TIMEOUT_MS = 1000;

/** Liveness and readiness probes. */
@Controller()
export class OpsController {
  constructor(
    private readonly bus: BusStateService,
    private readonly repository: ThresholdRepository,
  ) {}

  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Ready when the bus and the threshold database answer; 503 (degraded) otherwise. */
  @Get('health')
  async health(@Res() reply: FastifyReply): Promise<void> {
    const bus = this.bus.state;
    const database = await this.pingDatabase();
    const ok = bus !== 'disconnected' && database === 'up';
    void reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'degraded', bus, database });
  }

  private async pingDatabase(): Promise<'up' | 'down'> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.repository.ping(), timeout]);
      return 'up';
    } catch {
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  }
}
