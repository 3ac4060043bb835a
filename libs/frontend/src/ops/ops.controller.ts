import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { BusStateService } from './bus-state.service';

/** Liveness and readiness probes. */
@Controller()
export class OpsController {
  constructor(private readonly bus: BusStateService) {}

  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('health')
  health(@Res() reply: FastifyReply): void {
    const bus = this.bus.state;
    const ok = bus !== 'disconnected';
    void reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'degraded', bus });
  }
}
