import { Body, Controller, Get, HttpCode, Put } from '@nestjs/common';
import { SimEngine } from '../engine/sim-engine';
import { ParseBodyPipe } from './dto/parse-body.pipe';
import { requestBody } from './dto/request-fields';
import { InvalidRequestError } from './errors/openai-http.error';

export interface SpeedupState {
  speedup: number;
}

/** `{"speedup": F}`: a finite number ≥ 0, like the `--speedup` flag. */
function parseSpeedup(body: unknown): number {
  const { speedup } = requestBody(body);
  if (typeof speedup !== 'number' || !Number.isFinite(speedup) || speedup < 0) {
    throw new InvalidRequestError("'speedup' must be a finite number >= 0");
  }
  return speedup;
}

/**
 * The simulated worker's own controls, part of no engine's API: `PUT /sim/speedup` changes its
 * `--speedup` while it runs (a GPU that turns slower, a noisy neighbour), from each rank's next
 * engine step on, so tests can watch the frontend follow a worker whose speed changes.
 */
@Controller('sim')
export class SimControlController {
  constructor(private readonly engine: SimEngine) {}

  @Get('speedup')
  speedup(): SpeedupState {
    return { speedup: this.engine.speedup };
  }

  @Put('speedup')
  @HttpCode(200)
  setSpeedup(@Body(new ParseBodyPipe(parseSpeedup)) speedup: number): SpeedupState {
    this.engine.setSpeedup(speedup);
    return { speedup: this.engine.speedup };
  }
}
