// Docker HEALTHCHECK without curl (slim images have none): GET http://127.0.0.1:<port><path>,
// exit 0 on a 2xx answer within 2 s, 1 otherwise.
//
//   node docker/healthcheck.js <path> <port-flag> <port-env> <default-port>
//
// The port is read from the main process's own command line (`--http-port 8001`, `--port=9002`),
// then from the environment variable, then the default, so a container started with another
// port stays checkable without repeating the port in the HEALTHCHECK.
'use strict';
const { readFileSync } = require('node:fs');

const [path = '/live', flag = '--http-port', envName = 'SLUICE_HTTP_PORT', fallback = '8000'] =
  process.argv.slice(2);

function portFromCommandLine() {
  let args;
  try {
    // PID 1 is the app (exec from the entrypoint) or, under `init: true`, tini with the app's
    // command line after `--`: either way the flags are there.
    args = readFileSync('/proc/1/cmdline', 'utf8').split('\0');
  } catch {
    return undefined;
  }
  for (let i = 0; i < args.length; i++) {
    if (args[i] === flag) return args[i + 1];
    if (args[i].startsWith(`${flag}=`)) return args[i].slice(flag.length + 1);
  }
  return undefined;
}

const port = portFromCommandLine() || process.env[envName] || fallback;
fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2000) }).then(
  (res) => {
    if (!res.ok) process.stderr.write(`GET ${path} on port ${port}: HTTP ${res.status}\n`);
    process.exit(res.ok ? 0 : 1);
  },
  (err) => {
    process.stderr.write(`GET ${path} on port ${port}: ${err.message}\n`);
    process.exit(1);
  },
);
