// node:fs with globSync for the one shape the conformance suite uses
// ("**/NAME" under a cwd): the relative paths of the files so named.
import fs from 'node:fs';
import path from 'node:path';
export * from 'node:fs';
export default fs;
export function globSync(pattern, opts = {}) {
  const cwd = opts.cwd || process.cwd();
  const base = pattern.replace(/^\*\*\//, '');
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(path.join(cwd, dir), { withFileTypes: true })) {
      const rel = dir ? path.join(dir, e.name) : e.name;
      if (e.isDirectory()) walk(rel);
      else if (e.name === base) out.push(rel);
    }
  };
  walk('');
  return out;
}
