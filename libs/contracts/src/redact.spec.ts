import { redactCredentials } from './redact';

describe('redactCredentials', () => {
  const sut = redactCredentials;

  it.each([
    ['nats://user:pass@h:4222', 'nats://***@h:4222'],
    ['tls://token@h:4222', 'tls://***@h:4222'],
    ['nats://h:4222', 'nats://h:4222'],
    ['nats://user:pw@host:99999', 'nats://***@host:99999'],
    ['nats://a:1,nats://user:pw@h:2', 'nats://***@h:2'],
    ['http://u:p@ss/w@h:80/x', 'http://***@h:80/x'],
    ['HTTP://U:PW@H', 'HTTP://***@H'],
  ])('prints %s as %s', (text, shown) => {
    expect(sut(text)).toBe(shown);
  });

  it('hides each URL of a sentence and leaves the rest as it was', () => {
    expect(
      sut("invalid value 'a=http://u:pw@h:1' for --target: 'http://u:pw@h:1' is not a URL"),
    ).toBe("invalid value 'a=http://***@h:1' for --target: 'http://***@h:1' is not a URL");
  });

  it('leaves an address without a scheme alone', () => {
    expect(sut('ops@example.com wrote to 10.0.0.1:80')).toBe(
      'ops@example.com wrote to 10.0.0.1:80',
    );
  });
});
