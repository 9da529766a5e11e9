// Run by pack_test.sh inside a scratch project where the packed package was
// installed: blueprinting/elements imports under node (server-side
// rendering) without touching a browser global (it only looks whether
// HTMLElement and customElements exist), and the modules it names are in the
// tarball.
import assert from 'node:assert/strict';
import {existsSync, readFileSync, statSync} from 'node:fs';
import path from 'node:path';

const [tarball] = process.argv.slice(2);
const touched = [];
for (const name of ['window', 'document', 'customElements', 'HTMLElement', 'navigator']) {
  Object.defineProperty(globalThis, name, {
    configurable: true,
    get() {
      touched.push(name);
      return undefined;
    },
  });
}
const elements = await import('blueprinting/elements');
assert.deepEqual(touched.filter((name) => name !== 'HTMLElement' && name !== 'customElements'),
                 [], 'importing blueprinting/elements touched browser globals');
assert.deepEqual(Object.keys(elements.ELEMENTS).sort(),
                 ['blueprint-figure', 'blueprint-mapping', 'blueprint-memory', 'blueprint-schedule']);
assert.deepEqual(elements.launchWords(`--a 1  --b "x y" --c 'z'`), ['--a', '1', '--b', 'x y', '--c', 'z']);

// elements.d.ts maps every tag to its class in HTMLElementTagNameMap.
const types = readFileSync(path.join(process.cwd(), 'node_modules', 'blueprinting',
                                     'elements.d.ts'), 'utf8');
const tagMap = /interface HTMLElementTagNameMap \{([^}]*)\}/.exec(types)?.[1] ?? '';
for (const [tag, element] of Object.entries(elements.ELEMENTS)) {
  assert.ok(tagMap.includes(`'${tag}': ${element.name};`), `elements.d.ts lacks ${tag}`);
  assert.ok(types.includes(`export declare class ${element.name} `), `no class ${element.name}`);
}
// ...and every value it declares is exported by elements.js, and the reverse.
const declared = [...types.matchAll(/^export declare (?:class|const|function) (\w+)/gm)]
    .map((m) => m[1]).sort();
assert.deepEqual(declared, Object.keys(elements).sort(), 'elements.d.ts against elements.js');

// The files elements.js loads, next to it in the installed package.
const root = path.join(process.cwd(), 'node_modules', 'blueprinting');
for (const file of ['blueprinting_slim.mjs', 'blueprinting_slim.wasm', 'blueprinting_import.mjs',
                    'blueprinting_import.wasm', 'elements.d.ts',
                    'core-presets/systems/h100_sxm_80g.json',
                    'core-presets/models/llama3.1-70b.json']) {
  assert.ok(existsSync(path.join(root, file)), `the installed package lacks ${file}`);
}
// The main module still works from the install.
const {default: createBlueprinting} = await import('blueprinting');
const bp = await createBlueprinting();
assert.match(bp.version(), /^blueprinting /);
console.log(`ok: ${path.basename(tarball)} (${statSync(tarball).size} bytes) installs offline; ` +
            'blueprinting/elements imports under node without touching window');
console.log('PASS');
