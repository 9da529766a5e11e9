// A worker thread of tools/search_bench.mjs --workers N: its own instance of
// the module, one search part per message (as web/worker.js in the page).
import {parentPort, workerData} from 'node:worker_threads';

const {default: createBlueprinting} = await import(workerData.entry);
const bp = await createBlueprinting();
parentPort.on('message', ({app, sys, args}) => {
  parentPort.postMessage(bp.search(app, sys, args));
});
