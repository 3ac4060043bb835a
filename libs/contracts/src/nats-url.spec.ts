import { natsServerOptions } from './nats-url';

describe('natsServerOptions', () => {
  const sut = natsServerOptions;

  it('passes a URL without credentials through', () => {
    expect(sut('nats://127.0.0.1:4222')).toEqual({ servers: 'nats://127.0.0.1:4222' });
  });

  it('splits user and password out of the URL', () => {
    expect(sut('tls://sluice-frontend:s%40cret@nats.internal:4222')).toEqual({
      servers: 'tls://nats.internal:4222',
      user: 'sluice-frontend',
      pass: 's@cret',
    });
  });

  it('reads a lone user-info part as a token', () => {
    expect(sut('nats://t0ken@127.0.0.1:4222')).toEqual({
      servers: 'nats://127.0.0.1:4222',
      token: 't0ken',
    });
  });
});
