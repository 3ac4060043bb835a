import {
  defaultMaxConnections,
  FALLBACK_MAX_CONNECTIONS,
  FILE_LIMIT_MARGIN,
  openFileLimit,
} from './connection-cap';

const limits = (soft: string): string =>
  'Limit                     Soft Limit           Hard Limit           Units     \n' +
  'Max processes             63455                63455                processes \n' +
  `Max open files            ${soft.padEnd(20)} 1048576              files     \n`;

describe('connection cap default', () => {
  it('reads the soft open-file limit', () => {
    expect(openFileLimit(limits('65536'))).toBe(65536);
  });

  it('knows no limit when it is unlimited or missing', () => {
    expect(openFileLimit(limits('unlimited'))).toBeNull();
    expect(openFileLimit('')).toBeNull();
  });

  it('keeps a margin under the file limit, a quarter of a small one', () => {
    expect(defaultMaxConnections(65536)).toBe(65536 - FILE_LIMIT_MARGIN);
    expect(defaultMaxConnections(400)).toBe(300);
    expect(defaultMaxConnections(1)).toBe(1);
  });

  it('falls back to a fixed cap when the limit is unknown', () => {
    expect(defaultMaxConnections(null)).toBe(FALLBACK_MAX_CONNECTIONS);
  });
});
