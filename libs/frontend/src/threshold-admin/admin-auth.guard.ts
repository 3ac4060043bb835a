import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { FrontendConfig } from '../config/frontend-config';
import { AdminForbiddenError, AdminUnauthorizedError } from './errors/admin-auth.error';

export interface AdminRequest {
  ip: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  /** Set by the guard: the admin token's name, or `anonymous` for a loopback write. */
  sluiceActor?: string;
  /** Set by the guard, on reads too: the name of the valid admin token presented, if any. */
  sluiceAdmin?: string;
}

/**
 * Headers a proxy or a mesh sidecar adds: a loopback connection that carries one came from
 * somewhere else, so it is not a local operator.
 */
const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'via'] as const;

export function isProxied(headers: AdminRequest['headers']): boolean {
  return PROXY_HEADERS.some((h) => headers[h] !== undefined);
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}

/**
 * A loopback client that addressed us by a loopback name. A web page whose DNS name was
 * rebound to 127.0.0.1 also connects from loopback, but its browser sends that name as Host.
 */
export function isLoopbackHost(host: string | string[] | undefined): boolean {
  return (
    typeof host === 'string' && /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d{1,5})?$/i.test(host)
  );
}

/** The token of `Authorization: Bearer <token>`, if the header has that form. */
function bearerOf(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value || !/^Bearer\s+\S/i.test(value)) return undefined;
  return value.replace(/^Bearer\s+/i, '').trim();
}

/** A POST that carries anything besides `model` is a write (only `model` = a read). */
function isWrite(body: unknown): boolean {
  return typeof body === 'object' && body !== null && Object.keys(body).some((k) => k !== 'model');
}

/**
 * Guards threshold writes: with `--admin-token NAME:TOKEN` configured, a bearer token is
 * required (401 without, 403 wrong) and compared in constant time; without any, every write is
 * refused (401), or with `--admin-allow-loopback` only loopback clients that address a loopback
 * name may write. Tokens are compared as SHA-256 digests so
 * their length does not leak.
 */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  private readonly tokens: Array<{ name: string; digest: Buffer }>;
  private readonly loopbackWrites: boolean;

  constructor(config: FrontendConfig) {
    this.tokens = config.adminTokens.map((t) => ({ name: t.name, digest: digest(t.token) }));
    this.loopbackWrites = config.adminAllowLoopback;
  }

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<AdminRequest>();
    const bearer = bearerOf(req.headers.authorization);
    if (!isWrite(req.body)) {
      // Reads are open; a valid token only decides how much an error answer may say.
      if (bearer !== undefined) req.sluiceAdmin = this.match(digest(bearer));
      return true;
    }
    return this.authorizeWrite(req);
  }

  /**
   * Checks a request that needs admin rights whatever it is (a threshold write; every tenant
   * route): sets `sluiceActor` or throws the 401 / 403.
   */
  authorizeWrite(req: AdminRequest): true {
    const bearer = bearerOf(req.headers.authorization);
    if (this.tokens.length === 0) {
      // No address stands in for a token unless the operator says so: a reverse proxy on the
      // same host makes every client a loopback one.
      if (!this.loopbackWrites) {
        throw new AdminUnauthorizedError(
          'No admin token is configured: threshold changes are refused; start the frontend ' +
            'with --admin-token NAME:TOKEN (or --admin-allow-loopback for loopback clients)',
        );
      }
      return this.allowLoopback(req);
    }
    if (bearer === undefined) throw new AdminUnauthorizedError();
    const actor = this.match(digest(bearer));
    if (actor === undefined) throw new AdminForbiddenError();
    req.sluiceActor = req.sluiceAdmin = actor;
    return true;
  }

  private allowLoopback(req: AdminRequest): true {
    if (!isLoopback(req.ip) || !isLoopbackHost(req.headers.host)) {
      throw new AdminForbiddenError(
        'No admin token is configured: thresholds can be changed from loopback clients only, ' +
          'addressing localhost, 127.0.0.1 or [::1]',
      );
    }
    if (isProxied(req.headers)) {
      throw new AdminForbiddenError(
        'No admin token is configured: a loopback write that came through a proxy ' +
          '(Forwarded, X-Forwarded-For or Via) is refused; configure --admin-token',
      );
    }
    req.sluiceActor = 'anonymous';
    return true;
  }

  /** Looks at every token whatever matches, so timing says nothing about which one did. */
  private match(presented: Buffer): string | undefined {
    let actor: string | undefined;
    for (const t of this.tokens) {
      if (timingSafeEqual(presented, t.digest) && actor === undefined) actor = t.name;
    }
    return actor;
  }
}
