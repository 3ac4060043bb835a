import {
  ArgumentMetadata,
  BadRequestException,
  HttpException,
  Type,
  ValidationPipe,
} from '@nestjs/common';
import { IsString, ValidateNested } from 'class-validator';
import fc from 'fast-check';
import {
  ChatCompletionRequestDto,
  CompletionRequestDto,
  EmbeddingRequestDto,
} from './dto/openai-request.dto';
import { compileChecks, OpenAiBodyPipe } from './openai-body.pipe';

const DTOS: Array<Type<unknown>> = [
  ChatCompletionRequestDto,
  CompletionRequestDto,
  EmbeddingRequestDto,
];

/** Nest's own pipe over the same DTOs: the reference for every answer. */
const reference = new ValidationPipe({ whitelist: false, transform: false });

async function outcome(
  run: () => unknown,
): Promise<{ ok: true; value: unknown } | { ok: false; status: number; body: unknown }> {
  try {
    return { ok: true, value: await run() };
  } catch (err) {
    if (!(err instanceof HttpException)) throw err;
    return { ok: false, status: err.getStatus(), body: err.getResponse() };
  }
}

const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom('', ' ', 'x'.repeat(256), 'x'.repeat(257), '😀'.repeat(200), '😀'.repeat(257)),
  fc.constantFrom(0, -1, 0.5, 1, 1.5, 2 ** 53, Number.MAX_VALUE, true, false, null, [], {}),
  fc.constantFrom([1, 2], [[1], [2]], [[]], [1, 'a'], [[1.5]], ['a', 'b'], [{}], [[], 1]),
);

const field = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 2, arbitrary: arb }, anyValue);

const body = fc.oneof(
  { weight: 1, arbitrary: anyValue },
  {
    weight: 6,
    arbitrary: fc.record(
      {
        model: field(fc.constantFrom('Qwen/Qwen3-0.6B', 'm')),
        stream: field(fc.boolean()),
        max_tokens: field(
          fc.oneof(fc.integer({ min: -2, max: 100 }), fc.constantFrom(2 ** 53, 1.7e308)),
        ),
        max_completion_tokens: field(
          fc.oneof(fc.integer({ min: -2, max: 100 }), fc.constantFrom(2 ** 53, 1.7e308)),
        ),
        messages: field(fc.array(fc.record({ role: fc.constant('user'), content: fc.string() }))),
        prompt: field(fc.oneof(fc.string(), fc.array(fc.nat()), fc.array(fc.string()))),
        input: field(fc.oneof(fc.string(), fc.array(fc.array(fc.nat())))),
        extra: anyValue,
      },
      { requiredKeys: [] },
    ),
  },
);

describe('OpenAiBodyPipe', () => {
  const sut = new OpenAiBodyPipe();

  it('answers every body as ValidationPipe does: same pass or 400, same messages in the same order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...DTOS), body, async (metatype, value) => {
        const metadata: ArgumentMetadata = { type: 'body', metatype, data: undefined };
        // ValidationPipe strips keys in place; give each pipe its own copy.
        const copy = (): unknown => structuredClone(value);
        const expected = await outcome(() => reference.transform(copy(), metadata));
        const actual = await outcome(() => sut.transform(copy(), metadata));
        expect(actual).toEqual(expected);
      }),
      { numRuns: 1500, seed: 20261130 },
    );
  });

  it('returns the body itself, untouched, when it is valid', () => {
    const value = { model: 'm', messages: [{ role: 'user', content: 'hi' }], top_k: 3 };
    const metadata: ArgumentMetadata = { type: 'body', metatype: ChatCompletionRequestDto };
    expect(sut.transform(value, metadata)).toBe(value);
  });

  it.each([2 ** 53, 1.7e308])(
    'refuses max_tokens and max_completion_tokens of %d: above 2^53-1 (docs/security.md#limits-and-hardening)',
    async (n) => {
      const metadata: ArgumentMetadata = { type: 'body', metatype: ChatCompletionRequestDto };
      const messages = [{ role: 'user', content: 'hi' }];
      for (const field of ['max_tokens', 'max_completion_tokens']) {
        await expect(
          Promise.resolve(sut.transform({ model: 'm', messages, [field]: n }, metadata)),
        ).rejects.toThrow(BadRequestException);
      }
      const ok = { model: 'm', messages, max_tokens: Number.MAX_SAFE_INTEGER };
      expect(sut.transform(ok, metadata)).toBe(ok);
    },
  );

  it('refuses at load a DTO whose decorators it cannot run, naming the property', () => {
    class NestedDto {
      @IsString()
      name!: string;

      @ValidateNested()
      inner!: unknown;
    }
    expect(() => compileChecks(NestedDto)).toThrow(/NestedDto\.inner/);
  });

  it('leaves parameters other than the OpenAI bodies alone', () => {
    expect(sut.transform('x', { type: 'query', metatype: String })).toBe('x');
  });
});
