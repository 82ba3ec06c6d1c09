// Mocha entry point for the integration suite, loaded by the VS Code extension host
// (extensionTestsPath = out/test/suite/index.js). Runs every *.test.js beside this file.
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'tdd', color: false, timeout: 60000 });
  for (const f of fs
    .readdirSync(__dirname)
    .filter((f) => f.endsWith('.test.js'))
    .sort()) {
    mocha.addFile(path.join(__dirname, f));
  }
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} integration test(s) failed`)) : resolve()));
  });
}
