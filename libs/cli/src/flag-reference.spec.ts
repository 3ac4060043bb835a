import { listFlag, switchFlag, valueFlag } from './flag-table';
import { formatFlagReference } from './flag-reference';

const TABLE = {
  'http-port': valueFlag({ arg: 'PORT', help: 'listen port', parse: Number, default: 8000 }),
  mode: valueFlag({ arg: 'a|b', help: 'how: a or b', parse: String, default: 'a' }),
  'nats-url': valueFlag({ arg: 'URL', help: 'NATS server', parse: String, default: undefined }),
  target: listFlag({ arg: 'URL', help: 'an engine' }),
  stream: switchFlag({ help: 'stream answers', default: true }),
  json: switchFlag({ help: 'print JSON', default: false }),
};

describe('formatFlagReference', () => {
  it('gives each flag a row with its variable, default and help', () => {
    expect(formatFlagReference(TABLE, 'APP_').split('\n')).toEqual([
      '| flag | variable | default | meaning |',
      '| --- | --- | --- | --- |',
      '| `--http-port PORT` | `APP_HTTP_PORT` | `8000` | listen port |',
      '| `--mode a\\|b` | `APP_MODE` | `a` | how: a or b |',
      '| `--nats-url URL` | `APP_NATS_URL` | unset | NATS server |',
      '| `--target URL` | `APP_TARGET` | unset | an engine. Repeatable; its variable takes a comma-separated list |',
      '| `--stream, --no-stream` | — | `on` | stream answers |',
      '| `--json, --no-json` | — | off | print JSON |',
    ]);
  });

  it('leaves the variable column out for an app that reads no environment', () => {
    const [head, , row] = formatFlagReference({ 'http-port': TABLE['http-port'] }).split('\n');
    expect(head).toBe('| flag | default | meaning |');
    expect(row).toBe('| `--http-port PORT` | `8000` | listen port |');
  });
});
