import {
  Body,
  Controller,
  Get,
  HttpCode,
  Post,
  Query,
  Req,
  UseGuards,
  UsePipes,
  ValidationPipe,
} from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAuthGuard, AdminRequest } from './admin-auth.guard';
import { DeclaredKeysPipe } from './declared-keys.pipe';
import { AuditPageDto, AuditQueryDto } from './dto/audit.dto';
import { SetThresholdDto } from './dto/set-threshold.dto';
import { ThresholdEntryDto, ThresholdListDto } from '../thresholds/dto/threshold-entry.dto';
import { ThresholdAdminService } from './threshold-admin.service';

/** Strict for the admin API: unknown keys are refused, nothing is coerced. */
const adminPipe = new ValidationPipe({
  whitelist: true,
  forbidNonWhitelisted: true,
  transform: true,
});

/** The request's id (the caller's `x-request-id` when it sent a sane one), echoed in the reply. */
function requestId(req: AdminRequest): string | null {
  const id = (req as { id?: unknown }).id;
  return typeof id === 'string' ? id : null;
}

@ApiTags('busy thresholds')
@Controller('busy_threshold')
@UsePipes(new DeclaredKeysPipe(), adminPipe)
export class BusyThresholdController {
  constructor(private readonly admin: ThresholdAdminService) {}

  @Get()
  @ApiOperation({
    summary: 'Effective thresholds of every model with live workers or stored values',
  })
  @ApiOkResponse({ type: ThresholdListDto })
  list(): ThresholdListDto {
    return { thresholds: this.admin.list() };
  }

  @Post()
  @HttpCode(200)
  @UseGuards(AdminAuthGuard)
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Read (only `model`) or change a model’s thresholds and admission mode',
    description:
      'A value (a number; for `admission_control` one of `token-capacity`, `shadow`, `none`) sets the per-model value, `null` clears it (the global flag applies again), an absent key is unchanged. Stored with an audit row in one transaction; applies on every replica within 1 s.',
  })
  @ApiOkResponse({ type: ThresholdEntryDto })
  set(@Body() dto: SetThresholdDto, @Req() req: AdminRequest): Promise<ThresholdEntryDto> {
    const meta = {
      actor: req.sluiceActor ?? 'anonymous',
      source: req.ip,
      requestId: requestId(req),
    };
    return this.admin.set(dto, meta, req.sluiceAdmin !== undefined);
  }

  @Get('audit')
  @UseGuards(AdminAuthGuard)
  @ApiOperation({
    summary: 'Threshold changes, newest first; pass `next` back as `before` for the next page',
  })
  @ApiOkResponse({ type: AuditPageDto })
  audit(@Query() query: AuditQueryDto, @Req() req: AdminRequest): Promise<AuditPageDto> {
    return this.admin.audit(query, req.sluiceAdmin !== undefined);
  }
}
