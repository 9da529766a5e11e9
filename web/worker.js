// Runs bp.search off the page's thread: the search is one synchronous wasm
// call, so cancelling it means terminating this worker. The worker is kept
// for later searches (search.js WorkerPool): messages are handled one at a
// time, in order, and each answer carries the id of its request.
//   in:  {id, app, system, args}   (Calculon app and system JSON, CLI flags)
//   out: {id, type: 'progress', fraction} ... then
//        {id, type: 'done', ok, output, errors, broken}
//        (broken: the call threw, a trap or an abort; the instance is unusable)
import createBlueprinting from './blueprinting.mjs';
import {call} from './dom.js';

// Fresh memory costs a page fault per 4 KiB on first touch, some 0.2-0.3 s
// for the heap one part of a large search reaches (Qwen3-235B-A22B on 2,048
// GPUs, every dimension: 83 MiB). The worker is made while the page is idle
// (search.js WorkerPool): it touches that much once then, so that the first
// search does not pay for it. A module's heap never shrinks; the freed block
// serves the searches.
const RESERVE_BYTES = 80 << 20;
const module = createBlueprinting().then((bp) => {
  const block = bp._malloc(RESERVE_BYTES);
  if (block) {
    bp.HEAPU8.fill(0, block, block + RESERVE_BYTES);
    bp._free(block);
  }
  return bp;
});

self.onmessage = async ({data}) => {
  const {id} = data;
  let bp;
  try {
    bp = await module;
  } catch (e) {
    self.postMessage({id, type: 'done', ok: false, output: '', broken: true,
                      errors: [{field: '', message: `could not load the WebAssembly module: ${e}`}]});
    return;
  }
  // Progress may be reported very often; post at most every 1% or 100 ms.
  let lastFraction = -1;
  let lastTime = 0;
  const progress = (fraction) => {
    const now = performance.now();
    if (fraction - lastFraction >= 0.01 || now - lastTime >= 100) {
      lastFraction = fraction;
      lastTime = now;
      self.postMessage({id, type: 'progress', fraction: Number(fraction)});
    }
  };
  let broken = false;
  const search = (...args) => {
    try {
      return bp.search(...args);
    } catch (e) {
      broken = true;
      throw e;
    }
  };
  const result = call({search}, 'search', data.app, data.system, data.args, progress);
  self.postMessage({id, type: 'done', ...result, broken});
};
