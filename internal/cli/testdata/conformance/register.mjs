// The conformance suite's CLI (0.1.16) imports fs.globSync, which Node
// has from 22 on; on an older Node (20 here) a resolve hook gives the
// suite's modules an fs with a small globSync (fs-shim.mjs). On Node 22
// and later nothing is changed.
import fs from 'node:fs';
import { register } from 'node:module';
if (typeof fs.globSync !== 'function') register('./hooks.mjs', import.meta.url);
