import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { StatusDto } from './dto/status.dto';
import { STATUS_PAGE_CSP, STATUS_PAGE_HTML } from './status-page.html';
import { StatusService } from './status.service';

/** The live status page and the snapshot it polls. */
@ApiTags('status page')
@Controller('ui')
export class StatusController {
  constructor(private readonly status: StatusService) {}

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
}
