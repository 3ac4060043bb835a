import { hostname } from 'node:os';
import { OwnAddress } from './own-address';

describe('OwnAddress', () => {
  describe('listening on a loopback address', () => {
    const sut = new OwnAddress('127.0.0.1', () => 8000);

    it.each([
      'http://127.0.0.1:8000',
      'http://localhost:8000/',
      'http://LOCALHOST:8000/v1',
      'http://0.0.0.0:8000',
      'http://[::1]:8000',
    ])('knows %s as itself', (endpoint) => {
      expect(sut.is(endpoint)).toBe(true);
    });

    it.each([
      'http://127.0.0.1:8001',
      'http://127.0.0.2:8000',
      'http://10.1.2.3:8000',
      'http://127.0.0.1',
      'not a url',
    ])('does not take %s for itself', (endpoint) => {
      expect(sut.is(endpoint)).toBe(false);
    });
  });

  it('takes default ports into account', () => {
    expect(new OwnAddress('127.0.0.1', () => 80).is('http://127.0.0.1')).toBe(true);
    expect(new OwnAddress('127.0.0.1', () => 443).is('https://localhost/')).toBe(true);
  });

  it('on a wildcard address, knows any loopback address and this host name', () => {
    const sut = new OwnAddress('0.0.0.0', () => 8000);
    expect(sut.is('http://127.0.0.2:8000')).toBe(true);
    expect(sut.is(`http://${hostname()}:8000`)).toBe(true);
    expect(sut.is('http://203.0.113.9:8000')).toBe(false);
  });

  it('on a specific address, knows only that one', () => {
    const sut = new OwnAddress('10.1.2.3', () => 8000);
    expect(sut.is('http://10.1.2.3:8000')).toBe(true);
    expect(sut.is('http://127.0.0.1:8000')).toBe(false);
  });

  it('reads the port when asked, so a port picked at listen time counts', () => {
    let port = 0;
    const sut = new OwnAddress('127.0.0.1', () => port);
    port = 41234;
    expect(sut.is('http://127.0.0.1:41234')).toBe(true);
  });
});

describe('OwnAddress memo', () => {
  it('judges an endpoint again when the port changes', () => {
    let port = 8000;
    const sut = new OwnAddress('127.0.0.1', () => port);
    expect(sut.is('http://127.0.0.1:9000')).toBe(false);
    expect(sut.is('http://127.0.0.1:9000')).toBe(false);
    port = 9000;
    expect(sut.is('http://127.0.0.1:9000')).toBe(true);
  });

  it('gives the same verdicts past its size limit', () => {
    const sut = new OwnAddress('127.0.0.1', () => 8000);
    for (let i = 0; i < 20000; i++)
      expect(sut.is(`http://10.0.${i >> 8}.${i & 255}:8000`)).toBe(false);
    expect(sut.is('http://127.0.0.1:8000')).toBe(true);
  });
});
