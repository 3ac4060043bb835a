import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  Post,
  Query,
  Req,
  Res,
  StreamableFile,
  UseGuards,
  UsePipes,
  ValidationPipe,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiPreconditionFailedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { AdminAuthGuard, AdminRequest } from './admin-auth.guard';
import { DeclaredKeysPipe } from './declared-keys.pipe';
import { AuditPageDto, AuditQueryDto } from './dto/audit.dto';
import { SetThresholdDto } from './dto/set-threshold.dto';
import { ThresholdEntryDto, ThresholdPageDto } from '../thresholds/dto/threshold-entry.dto';
import { DEFAULT_LIST_PAGE, ThresholdListQueryDto } from './dto/list-query.dto';
import { wholeList } from './threshold-list.stream';
import { ThresholdAdminService } from './threshold-admin.service';

/** Strict for the admin API: unknown keys are refused, nothing is coerced. */
const adminPipe = new ValidationPipe({
  whitelist: true,
  forbidNonWhitelisted: true,
  transform: true,
});

/** What a handler needs of the reply to add a header (Fastify's and Express's both have it). */
interface HeaderSink {
  header(name: string, value: string): unknown;
}

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
    description:
      'Without `limit` and `after`: every entry (`{"thresholds":[…]}`), written as the client reads it. ' +
      'With either: one page in model order (`limit` 1..1000, default 100) and `next`, the `after` of the following page (null on the last).',
  })
  @ApiOkResponse({ type: ThresholdPageDto })
  @ApiBadRequestResponse({ description: 'invalid `limit` or `after`' })
  list(@Query() query: ThresholdListQueryDto): ThresholdPageDto | StreamableFile {
    if (query.limit === undefined && query.after === undefined) {
      const body = wholeList(this.admin.models(), (m) => this.admin.entry(m));
      return new StreamableFile(body, { type: 'application/json; charset=utf-8' });
    }
    return this.admin.page(query.after, query.limit ?? DEFAULT_LIST_PAGE);
  }

  @Post()
  @HttpCode(200)
  @UseGuards(AdminAuthGuard)
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Read (only `model`) or change a model’s thresholds and admission mode',
    description:
      'A value (a number; for `admission_control` one of `token-capacity`, `shadow`, `none`; `ttft_slo_ms` is the TTFT objective in ms, an integer ≥ 1) sets the per-model value, `null` clears it (the global flag applies again), an absent key is unchanged. Stored with an audit row in one transaction; applies on every replica within 1 s. ' +
      'Every answer carries the ETag of the model’s stored state; a change sent with `If-Match` applies only while that is still the stored state (else 412, nothing changed). ' +
      'With `ttl_secs` the change is temporary: when it expires, each key it set returns to its value from before, unless a later write set that key again (a later temporary change of the key keeps the value to return to, with its own expiry).',
  })
  @ApiHeader({
    name: 'If-Match',
    required: false,
    description:
      'Writes only: the ETag of a read (`"42"`), a list of them, or `*` (the model was changed before). Reads ignore it.',
  })
  @ApiOkResponse({
    type: ThresholdEntryDto,
    headers: {
      ETag: {
        description:
          'Strong entity tag of the model’s stored state (the id of the audit entry of its newest change, `"0"` if never changed); any stored change gives a new one.',
        schema: { type: 'string', example: '"42"' },
      },
    },
  })
  @ApiBadRequestResponse({ description: 'invalid body or If-Match; nothing changed' })
  @ApiPreconditionFailedResponse({
    description:
      'If-Match does not match the stored state; nothing changed. Body: `{"message":…,"type":"precondition_failed","code":412}`.',
  })
  async set(
    @Body() dto: SetThresholdDto,
    @Req() req: AdminRequest,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: HeaderSink,
  ): Promise<ThresholdEntryDto> {
    const meta = {
      actor: req.sluiceActor ?? 'anonymous',
      source: req.ip,
      requestId: requestId(req),
    };
    const answer = await this.admin.set(dto, meta, req.sluiceAdmin !== undefined, ifMatch);
    reply.header('ETag', answer.etag);
    return answer.entry;
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
