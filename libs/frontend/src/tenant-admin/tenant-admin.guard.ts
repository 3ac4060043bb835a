import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { AdminAuthGuard, AdminRequest } from '../threshold-admin/admin-auth.guard';

/**
 * Every `/tenants` route, reads included, needs the admin rights a threshold write needs: tenants
 * hold limits and key ids, and their usage is per customer (docs/api.md#tenants).
 */
@Injectable()
export class TenantAdminGuard implements CanActivate {
  constructor(private readonly admin: AdminAuthGuard) {}

  canActivate(context: ExecutionContext): boolean {
    return this.admin.authorizeWrite(context.switchToHttp().getRequest<AdminRequest>());
  }
}
