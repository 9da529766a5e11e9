// Runs bp.search off the page's thread: the search is one synchronous wasm
// call, so cancelling it means terminating this worker.
//   in:  {app, system, args}   (Calculon app and system JSON, CLI flags)
//   out: {type: 'progress', fraction} ... then {type: 'done', ok, output, errors}
import createBlueprinting from './blueprinting.mjs';
import {call} from './dom.js';

const module = createBlueprinting();

self.onmessage = async ({data}) => {
  let bp;
  try {
    bp = await module;
  } catch (e) {
    self.postMessage({type: 'done', ok: false, output: '',
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
      self.postMessage({type: 'progress', fraction: Number(fraction)});
    }
  };
  const result = call(bp, 'search', data.app, data.system, data.args, progress);
  self.postMessage({type: 'done', ...result});
};
