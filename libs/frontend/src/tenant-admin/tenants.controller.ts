import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { AdminRequest } from '../threshold-admin/admin-auth.guard';
import { TenantAuditMeta } from '../thresholds/persistence';
import {
  NewKeyDto,
  PutTenantDto,
  TenantAuditPageDto,
  TenantDto,
  TenantListDto,
  TenantUsageDto,
} from './dto/tenant.dto';
import { TenantAdminGuard } from './tenant-admin.guard';
import { TenantAdminService } from './tenant-admin.service';
import {
  auditCursor,
  pageLimit,
  parsePutTenant,
  reasonOf,
  tenantId,
  windowMinutes,
} from './tenant-input';

interface StatusSink {
  status(code: number): unknown;
}

function metaOf(req: AdminRequest, reason: string | null): TenantAuditMeta {
  const id = (req as { id?: unknown }).id;
  return {
    actor: req.sluiceActor ?? 'anonymous',
    source: req.ip,
    requestId: typeof id === 'string' ? id : null,
    reason,
  };
}

const reasonQuery = {
  name: 'reason',
  required: false,
  description: 'why, for the audit log (at most 512 characters)',
} as const;

@ApiTags('tenants')
@ApiBearerAuth()
@Controller('tenants')
@UseGuards(TenantAdminGuard)
export class TenantsController {
  constructor(private readonly admin: TenantAdminService) {}

  @Get()
  @ApiOperation({ summary: 'Tenants, ordered by id; pass `next` as `after` for the next page' })
  @ApiQuery({ name: 'limit', required: false, description: '1 … 1000, default 100' })
  @ApiQuery({ name: 'after', required: false })
  @ApiOkResponse({ type: TenantListDto })
  list(@Query('limit') limit?: string, @Query('after') after?: string): Promise<TenantListDto> {
    return this.admin.list(
      pageLimit(limit, 100),
      after === undefined ? undefined : tenantId(after),
    );
  }

  @Get(':id')
  @ApiOperation({ summary: 'One tenant' })
  @ApiOkResponse({ type: TenantDto })
  @ApiNotFoundResponse()
  get(@Param('id') id: string): Promise<TenantDto> {
    return this.admin.get(tenantId(id));
  }

  @Put(':id')
  @ApiOperation({
    summary: 'Create or replace a tenant (an absent key takes its default: weight 1, no limit)',
  })
  @ApiBody({ type: PutTenantDto })
  @ApiOkResponse({ type: TenantDto, description: 'replaced' })
  @ApiCreatedResponse({ type: TenantDto, description: 'created' })
  @ApiBadRequestResponse({ description: 'invalid id or body; nothing changed' })
  async put(
    @Param('id') id: string,
    @Body() body: unknown,
    @Req() req: AdminRequest,
    @Res({ passthrough: true }) reply: StatusSink,
  ): Promise<TenantDto> {
    const { settings, reason } = parsePutTenant(body);
    const answer = await this.admin.put(tenantId(id), settings, metaOf(req, reason));
    reply.status(answer.created ? 201 : 200);
    return answer.tenant;
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a tenant and its keys' })
  @ApiQuery(reasonQuery)
  @ApiNoContentResponse()
  @ApiNotFoundResponse()
  remove(
    @Param('id') id: string,
    @Req() req: AdminRequest,
    @Query('reason') reason?: string,
  ): Promise<void> {
    return this.admin.remove(tenantId(id), metaOf(req, reasonOf(reason)));
  }

  @Post(':id/keys')
  @ApiOperation({
    summary: 'A new API key for the tenant: shown once, stored only as its SHA-256 digest',
  })
  @ApiQuery(reasonQuery)
  @ApiCreatedResponse({ type: NewKeyDto })
  @ApiNotFoundResponse()
  addKey(
    @Param('id') id: string,
    @Req() req: AdminRequest,
    @Query('reason') reason?: string,
  ): Promise<NewKeyDto> {
    return this.admin.addKey(tenantId(id), metaOf(req, reasonOf(reason)));
  }

  @Delete(':id/keys/:keyId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke one key of the tenant' })
  @ApiQuery(reasonQuery)
  @ApiNoContentResponse()
  @ApiNotFoundResponse()
  removeKey(
    @Param('id') id: string,
    @Param('keyId') keyId: string,
    @Req() req: AdminRequest,
    @Query('reason') reason?: string,
  ): Promise<void> {
    return this.admin.removeKey(tenantId(id), keyId, metaOf(req, reasonOf(reason)));
  }

  @Get(':id/usage')
  @ApiOperation({
    summary:
      'The tenant’s requests by outcome and tokens by kind on this replica over `window`, and its last minute as its limits count it (every replica’s)',
  })
  @ApiQuery({
    name: 'window',
    required: false,
    description: '`<n>m` or `<n>h`, 1m … 1h; default 1h',
  })
  @ApiOkResponse({ type: TenantUsageDto })
  @ApiNotFoundResponse()
  usage(@Param('id') id: string, @Query('window') window?: string): Promise<TenantUsageDto> {
    return this.admin.usage(tenantId(id), windowMinutes(window));
  }

  @Get(':id/audit')
  @ApiOperation({
    summary: 'Changes of the tenant and its keys, newest first; pass `next` as `before`',
  })
  @ApiQuery({ name: 'limit', required: false, description: '1 … 1000, default 50' })
  @ApiQuery({ name: 'before', required: false })
  @ApiOkResponse({ type: TenantAuditPageDto })
  audit(
    @Param('id') id: string,
    @Query('limit') limit?: string,
    @Query('before') before?: string,
  ): Promise<TenantAuditPageDto> {
    return this.admin.audit(tenantId(id), pageLimit(limit, 50), auditCursor(before));
  }
}
