import { InProcessBus } from './in-process-bus';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('InProcessBus', () => {
  let sut: InProcessBus;

  beforeEach(() => {
    sut = new InProcessBus();
  });

  it('delivers a published payload to the subscriber asynchronously', async () => {
    const listener = jest.fn();
    sut.subscribe('namespace.dynamo.kv_metrics', listener);
    const payload = bytes('{"worker_id":"w-1"}');

    sut.publish('namespace.dynamo.kv_metrics', payload);
    expect(listener).not.toHaveBeenCalled();

    await settle();
    expect(listener).toHaveBeenCalledTimes(1);
    expect(listener).toHaveBeenCalledWith(payload);
  });

  it('lets the publisher finish before any subscriber runs', async () => {
    const order: string[] = [];
    sut.subscribe('s', () => order.push('listener'));
    sut.publish('s', bytes('1'));
    order.push('publisher');
    await settle();
    expect(order).toEqual(['publisher', 'listener']);
  });

  it('delivers every message to every subscriber of the subject, in publish order', async () => {
    const first: string[] = [];
    const second: string[] = [];
    const decode = (b: Uint8Array): string => new TextDecoder().decode(b);
    sut.subscribe('s', (b) => first.push(decode(b)));
    sut.subscribe('s', (b) => second.push(decode(b)));

    sut.publish('s', bytes('1'));
    sut.publish('s', bytes('2'));
    await settle();

    expect(first).toEqual(['1', '2']);
    expect(second).toEqual(['1', '2']);
  });

  it('does not deliver to subscribers of other subjects', async () => {
    const other = jest.fn();
    sut.subscribe('namespace.other.kv_metrics', other);
    sut.publish('namespace.dynamo.kv_metrics', bytes('{}'));
    await settle();
    expect(other).not.toHaveBeenCalled();
  });

  it('drops a message published to a subject nobody listens to', async () => {
    expect(() => sut.publish('nobody', bytes('{}'))).not.toThrow();
    const late = jest.fn();
    sut.subscribe('nobody', late);
    await settle();
    expect(late).not.toHaveBeenCalled();
  });

  it('stops delivering to a listener once it unsubscribes, but not to the others', async () => {
    const gone = jest.fn();
    const stays = jest.fn();
    const unsubscribe = sut.subscribe('s', gone);
    sut.subscribe('s', stays);

    sut.publish('s', bytes('1'));
    await settle();
    unsubscribe();
    sut.publish('s', bytes('2'));
    await settle();

    expect(gone).toHaveBeenCalledTimes(1);
    expect(stays).toHaveBeenCalledTimes(2);
  });

  it('tolerates unsubscribing twice and resubscribing afterwards', async () => {
    const listener = jest.fn();
    const unsubscribe = sut.subscribe('s', listener);
    unsubscribe();
    unsubscribe();
    sut.subscribe('s', listener);
    sut.publish('s', bytes('1'));
    await settle();
    expect(listener).toHaveBeenCalledTimes(1);
  });
});
