import { RawJsonDeserializer } from './raw-json.deserializer';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('RawJsonDeserializer', () => {
  let sut: RawJsonDeserializer;

  beforeEach(() => {
    sut = new RawJsonDeserializer();
  });

  it('decodes UTF-8 JSON bytes into an event named by the channel', () => {
    const report = { worker_id: 'w-1', model: 'Qwen/Qwen3-0.6B', active_decode_blocks: 870 };
    expect(sut.deserialize(bytes(JSON.stringify(report)), { channel: 'kv_metrics' })).toEqual({
      pattern: 'kv_metrics',
      data: report,
    });
  });

  it('decodes a Buffer and a string alike', () => {
    const json = '{"worker_id":"w-ü"}';
    expect(sut.deserialize(Buffer.from(json), { channel: 'worker_down' }).data).toEqual({
      worker_id: 'w-ü',
    });
    expect(sut.deserialize(json, { channel: 'worker_down' }).data).toEqual({ worker_id: 'w-ü' });
  });

  it.each([
    ['data', { data: { worker_id: 'inner' }, worker_id: 'outer' }],
    ['pattern', { pattern: 'worker_down', worker_id: 'w-1' }],
    ['data and pattern', { pattern: 'worker_down', data: { worker_id: 'w-9' } }],
    ['id, data and pattern', { id: '1', pattern: 'x', data: 2 }],
  ])('never unwraps a payload with a top-level %s key', (_keys, payload) => {
    const event = sut.deserialize(bytes(JSON.stringify(payload)), { channel: 'kv_metrics' });
    expect(event).toEqual({ pattern: 'kv_metrics', data: payload });
  });

  it.each(['{"worker_id":', 'not json', '', '\u0000\u0001', "{'a':1}"])(
    'turns the undecodable payload %j into data undefined',
    (text) => {
      expect(sut.deserialize(bytes(text), { channel: 'kv_metrics' })).toEqual({
        pattern: 'kv_metrics',
        data: undefined,
      });
    },
  );

  it('turns invalid UTF-8 into data undefined instead of throwing', () => {
    const invalid = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    expect(sut.deserialize(invalid, { channel: 'kv_metrics' }).data).toBeUndefined();
  });

  it('passes JSON scalars, arrays and null through for the handler to judge', () => {
    expect(sut.deserialize(bytes('[1,2]'), { channel: 'c' }).data).toEqual([1, 2]);
    expect(sut.deserialize(bytes('null'), { channel: 'c' }).data).toBeNull();
    expect(sut.deserialize(bytes('42'), { channel: 'c' }).data).toBe(42);
  });

  it.each([undefined, null, 42, { worker_id: 'w-1' }])(
    'yields data undefined for the non-byte value %j',
    (value) => {
      expect(sut.deserialize(value, { channel: 'c' }).data).toBeUndefined();
    },
  );

  it('uses an empty pattern when no channel is given', () => {
    expect(sut.deserialize(bytes('{}'))).toEqual({ pattern: '', data: {} });
  });
});
