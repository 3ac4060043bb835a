// tsc keeps the source layout (dist/apps/<app>/src/main.js); the contract promises
// dist/apps/<app>/main.js, so each app gets a one-line entry point that loads its build.
const fs = require('node:fs');
const path = require('node:path');

const dist = path.join(__dirname, '..', 'dist', 'apps');
for (const app of fs.readdirSync(dist)) {
  const built = path.join(dist, app, 'src', 'main.js');
  if (fs.existsSync(built)) {
    fs.writeFileSync(path.join(dist, app, 'main.js'), "require('./src/main');\n");
  }
}
