import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HistoryDto } from './dto/history.dto';
import { StatusDto } from './dto/status.dto';
import { HistoryService } from './history.service';
import { STATUS_PAGE_CSP, STATUS_PAGE_HTML } from './status-page.html';
import { StatusService } from './status.service';

/** The live status page and the snapshots it polls. */
@ApiTags('status page')
@Controller('ui')
export class StatusController {
  constructor(
    private readonly status: StatusService,
    private readonly history: HistoryService,
  ) {}

  @Get()
  @ApiExcludeEndpoint()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', STATUS_PAGE_CSP)
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Cache-Control', 'no-store')
  page(): string {
    return STATUS_PAGE_HTML;
  }

  @Get('status.json')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Per model: thresholds, rejections/s, in-flight requests and workers' })
  @ApiOkResponse({ type: StatusDto })
  snapshot(): StatusDto {
    return this.status.snapshot();
  }

  @Get('history.json')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary:
      'Per model, the last 10 minutes in 5-second buckets: admitted and rejected requests/s ' +
      '(by priority class), share of busy workers, mean KV usage',
  })
  @ApiOkResponse({ type: HistoryDto })
  historySnapshot(): HistoryDto {
    return this.history.snapshot();
  }
}
