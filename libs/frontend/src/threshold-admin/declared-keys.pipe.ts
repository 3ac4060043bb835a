import {
  ArgumentMetadata,
  BadRequestException,
  Injectable,
  PipeTransform,
  Type,
} from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';

/**
 * Refuses every key the DTO does not declare. `forbidNonWhitelisted` alone lets through keys
 * named like `Object.prototype` members (`hasOwnProperty`, `constructor`, `valueOf`, ...):
 * class-validator looks them up in a plain object and finds the inherited function. Runs before
 * the ValidationPipe, on the raw body or query.
 */
@Injectable()
export class DeclaredKeysPipe implements PipeTransform {
  private readonly declared = new WeakMap<Type<unknown>, ReadonlySet<string>>();

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const type = metadata.metatype;
    if (!type || typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const allowed = this.keysOf(type);
    if (allowed.size === 0) return value;
    const unknown = Object.keys(value).filter((key) => !allowed.has(key));
    if (unknown.length > 0) {
      throw new BadRequestException(unknown.map((key) => `property ${key} should not exist`));
    }
    return value;
  }

  private keysOf(type: Type<unknown>): ReadonlySet<string> {
    let keys = this.declared.get(type);
    if (!keys) {
      const metadatas = getMetadataStorage().getTargetValidationMetadatas(type, '', true, false);
      keys = new Set(metadatas.map((m) => m.propertyName));
      this.declared.set(type, keys);
    }
    return keys;
  }
}
