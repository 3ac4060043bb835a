import { Injectable, Logger, LoggerService } from '@nestjs/common';

/**
 * Terminus' logger. A failed readiness check is a state the operator already sees (the bus and
 * store gauges, and one warning per transition from their own services), not a fault of this
 * process: terminus would log it at error level on every probe, e.g. while NATS is still coming
 * up at boot. Here it is a warning.
 */
@Injectable()
export class HealthCheckLogger implements LoggerService {
  private readonly logger = new Logger('Health');

  log(message: unknown): void {
    this.logger.log(message);
  }

  error(message: unknown): void {
    this.logger.warn(message);
  }

  warn(message: unknown): void {
    this.logger.warn(message);
  }
}
