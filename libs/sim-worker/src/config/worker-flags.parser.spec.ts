import { WorkerConfigError } from './worker-config.error';
import { parseWorkerFlags } from './worker-flags.parser';

describe('parseWorkerFlags', () => {
  it('applies the documented defaults', () => {
    const sut = parseWorkerFlags([]);
    expect(sut).toEqual({
      model: 'Qwen/Qwen3-0.6B',
      kvTotalBlocks: 16384,
      blockSize: 16,
      maxNumBatchedTokens: 8192,
      maxNumSeqs: 256,
      dpSize: 1,
      speedup: 1,
      host: '127.0.0.1',
      port: 9001,
      natsUrl: undefined,
      namespace: 'dynamo',
      workerId: expect.stringMatching(new RegExp(`^sim-.+-${process.pid}-[0-9a-f]{4}$`)),
      advertiseUrl: undefined,
      reportIntervalMs: 1000,
      metricsFormat: 'none',
      honourNameFilter: false,
    });
  });

  it('reads every flag, in both --flag value and --flag=value forms', () => {
    const sut = parseWorkerFlags([
      '--model=m',
      '--kv-total-blocks',
      '1000',
      '--block-size=32',
      '--max-num-batched-tokens=2048',
      '--max-num-seqs=8',
      '--dp-size=4',
      '--speedup=0.5',
      '--host=0.0.0.0',
      '--port=0',
      '--nats-url=nats://127.0.0.1:4222',
      '--namespace=test',
      '--worker-id=w-1',
      '--advertise-url=http://10.0.0.1:9001/',
      '--report-interval-ms=250',
      '--metrics-format=sglang',
      '--honour-name-filter',
    ]);
    expect(sut).toEqual({
      model: 'm',
      kvTotalBlocks: 1000,
      blockSize: 32,
      maxNumBatchedTokens: 2048,
      maxNumSeqs: 8,
      dpSize: 4,
      speedup: 0.5,
      host: '0.0.0.0',
      port: 0,
      natsUrl: 'nats://127.0.0.1:4222',
      namespace: 'test',
      workerId: 'w-1',
      advertiseUrl: 'http://10.0.0.1:9001',
      reportIntervalMs: 250,
      metricsFormat: 'sglang',
      honourNameFilter: true,
    });
  });

  it.each(['none', 'vllm', 'sglang'])('accepts --metrics-format %s', (format) => {
    expect(parseWorkerFlags(['--metrics-format', format]).metricsFormat).toBe(format);
  });

  it('accepts speedup 0 (no delay)', () => {
    expect(parseWorkerFlags(['--speedup', '0']).speedup).toBe(0);
  });

  it.each([
    [['--kv-total-blocks', '0'], "'0' for --kv-total-blocks"],
    [['--kv-total-blocks', 'lots'], "'lots' for --kv-total-blocks"],
    [['--block-size', '1.5'], "'1.5' for --block-size"],
    [['--max-num-seqs', '-3'], "'-3' for --max-num-seqs"],
    [['--dp-size', '5000'], "'5000' for --dp-size"],
    [['--speedup', '-1'], "'-1' for --speedup"],
    [['--speedup', 'fast'], "'fast' for --speedup"],
    [['--port', '70000'], "'70000' for --port"],
    [['--report-interval-ms', '0'], "'0' for --report-interval-ms"],
    [['--namespace', 'a.b'], "'a.b' for --namespace"],
    [['--worker-id', 'has space'], "'has space' for --worker-id"],
    [['--advertise-url', 'localhost:9001'], "'localhost:9001' for --advertise-url"],
    [['--model', ''], "'' for --model"],
    [['--metrics-format', 'tgi'], "'tgi' for --metrics-format: expected one of none, vllm, sglang"],
    [['--metrics-format', 'VLLM'], "'VLLM' for --metrics-format"],
  ])('rejects %j naming the flag and the value', (argv, named) => {
    expect(() => parseWorkerFlags(argv)).toThrow(WorkerConfigError);
    expect(() => parseWorkerFlags(argv)).toThrow(named);
  });

  it('rejects unknown flags and stray arguments', () => {
    expect(() => parseWorkerFlags(['--kv-blocks', '10'])).toThrow(/--kv-blocks/);
    expect(() => parseWorkerFlags(['--kv-blocks', '10'])).toThrow(WorkerConfigError);
    expect(() => parseWorkerFlags(['extra'])).toThrow(WorkerConfigError);
  });

  it('rejects a flag given without its value', () => {
    expect(() => parseWorkerFlags(['--port'])).toThrow(/--port/);
  });
});
