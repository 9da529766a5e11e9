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

const module = createBlueprinting();

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
