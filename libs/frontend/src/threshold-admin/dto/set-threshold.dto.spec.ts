import { ArgumentMetadata, BadRequestException, ValidationPipe } from '@nestjs/common';
import { NUMERIC_SPECS } from '../../thresholds/busy-thresholds';
import { DeclaredKeysPipe } from '../declared-keys.pipe';
import { SetThresholdDto } from './set-threshold.dto';

const MODEL = 'Qwen/Qwen3-0.6B';
const metadata: ArgumentMetadata = { type: 'body', metatype: SetThresholdDto };

/** The controller's pipes, in its order: declared keys first, then the strict ValidationPipe. */
async function sut(body: unknown): Promise<SetThresholdDto> {
  const pipe = new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true });
  return (await pipe.transform(
    new DeclaredKeysPipe().transform(body, metadata),
    metadata,
  )) as SetThresholdDto;
}

const rejected = async (body: unknown): Promise<string[]> => {
  try {
    await sut(body);
  } catch (err) {
    if (err instanceof BadRequestException) {
      return (err.getResponse() as { message: string[] }).message;
    }
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(body)} to be rejected`);
};

describe('SetThresholdDto', () => {
  it('accepts admission_control as one of its words, or null to clear it', async () => {
    for (const value of ['token-capacity', 'shadow', 'none', null]) {
      expect(await sut({ model: MODEL, admission_control: value })).toMatchObject({
        admission_control: value,
      });
    }
    expect((await sut({ model: MODEL })).admission_control).toBeUndefined();
  });

  it.each(['enforce', 'Shadow', '', 1, true, ['shadow']])(
    'rejects admission_control %j, naming the field and the words it takes',
    async (value) => {
      expect(await rejected({ model: MODEL, admission_control: value })).toEqual([
        'admission_control must be one of the following values: token-capacity, shadow, none',
      ]);
    },
  );

  it('accepts the waiting-requests threshold as an integer >= 0, or null to clear it', async () => {
    for (const value of [0, 2, Number.MAX_SAFE_INTEGER, null]) {
      expect(await sut({ model: MODEL, waiting_requests_threshold: value })).toMatchObject({
        waiting_requests_threshold: value,
      });
    }
    expect((await sut({ model: MODEL })).waiting_requests_threshold).toBeUndefined();
  });

  it.each([-1, 1.5, '3', true, [3], { n: 3 }])(
    'rejects waiting_requests_threshold %j naming the field',
    async (value) => {
      const messages = await rejected({ model: MODEL, waiting_requests_threshold: value });
      expect(messages.join('; ')).toMatch(/waiting_requests_threshold/);
    },
  );

  it('accepts a reason of up to 512 characters and ttl_secs from 1 to 604800', async () => {
    const body = { model: MODEL, active_decode_blocks_threshold: 0.5 };
    for (const fields of [
      { reason: 'r'.repeat(512), ttl_secs: 1 },
      { reason: '', ttl_secs: 604800 },
      { reason: null, ttl_secs: null },
    ]) {
      expect(await sut({ ...body, ...fields })).toMatchObject(fields);
    }
  });

  it.each([
    ['reason', 'r'.repeat(513)],
    ['reason', 42],
    ['reason', 'nul\u0000'],
    ['ttl_secs', 0],
    ['ttl_secs', 604801],
    ['ttl_secs', 1.5],
    ['ttl_secs', '60'],
    ['ttl_secs', true],
  ])('rejects %s %j naming the field', async (field, value) => {
    const messages = await rejected({
      model: MODEL,
      active_decode_blocks_threshold: 0.5,
      [field]: value,
    });
    expect(messages.join('; ')).toContain(field);
  });

  // The DTO's decorators and the table the flags are parsed with must agree on every key.
  describe.each(NUMERIC_SPECS.map((s) => [s.wire, s] as const))('%s', (wire, spec) => {
    it('accepts its minimum and null', async () => {
      expect(await sut({ model: MODEL, [wire]: spec.range.min })).toMatchObject({
        [wire]: spec.range.min,
      });
      expect(await sut({ model: MODEL, [wire]: null })).toMatchObject({ [wire]: null });
    });

    it('rejects a value below its minimum and a number sent as a string', async () => {
      await rejected({ model: MODEL, [wire]: spec.range.min - 1 });
      await rejected({ model: MODEL, [wire]: String(spec.range.min) });
    });

    it('rejects a fraction where it takes an integer, a value past its maximum', async () => {
      if (spec.range.integer) await rejected({ model: MODEL, [wire]: 0.5 });
      else expect(await sut({ model: MODEL, [wire]: 0.5 })).toMatchObject({ [wire]: 0.5 });
      if ('max' in spec.range) await rejected({ model: MODEL, [wire]: spec.range.max + 0.01 });
    });
  });
});
