// Included (--post-js) in blueprinting.mjs, inside its factory: wraps every
// command of the module so that no input makes it throw or trap.
//   * Arguments are read here, in plain JS, before the module sees them: an
//     array (or a files object) is copied, so a getter or Proxy that throws
//     fails here and becomes an error value, not an exception inside wasm.
//     Missing arguments are passed as undefined (refused by the bindings).
//   * search()'s progress callback is wrapped: an exception it throws stops
//     further progress calls and is rethrown after the search has returned,
//     instead of unwinding through the module.
//   * Anything thrown while the module runs (out of memory, a trap) becomes
//     {ok: false, output: '', errors: [{field: '', message: 'internal error: ...',
//     code: 'internal'}], notes: []}. The module's
//     memory is then in an unknown state (allocations of the interrupted call
//     are never freed), so the instance refuses every later call with the
//     same kind of error: create a new one with createBlueprinting().
(function() {
  // name -> number of arguments of the binding (wasm/bindings.cc); optional
  // ones (explain's depth, schedule's json, importMegatron's config,
  // search's progress) are
  // passed as undefined.
  // evaluateCase is only in the testing build (wasm/testing_bindings.cc): a
  // name the module does not export is skipped.
  var ARITY = {
    'check': 1, 'canonical': 1, 'analyze': 1, 'digest': 1, 'explain': 3, 'schedule': 2,
    'calculon': 3,
    'importCalculon': 3, 'importMegatron': 3, 'search': 4, 'mergeSearch': 1,
    'serve': 1, 'serveCheck': 1, 'serveExplain': 2, 'searchServing': 3,
    'evaluateCase': 1,
    'metadata': 0, 'presets': 0, 'validate': 1
  };
  var broken = '';  // what an earlier call died of

  function describe(e) {
    if (e && e.blueprintingOutOfMemory) return 'out of memory';
    if (e instanceof Error) return e.name + ': ' + e.message;
    try {
      return String(e);
    } catch (ignored) {
      return 'an exception';
    }
  }

  // code: one of the core's error codes (core/base/field_errors.h).
  function failure(name, message, code) {
    if (name === 'evaluateCase') {
      return [{'stage': 'errors', 'text': 'blueprinting.errors/1\n' + message + '\n'}];
    }
    return {'ok': false, 'output': '',
            'errors': [{'field': '', 'message': message, 'code': code}], 'notes': []};
  }

  function internalError(name, now) {
    return failure(name, 'internal error: ' + name + ': ' +
        (now ? broken : 'an earlier call failed (' + broken + ')') +
        '; this instance of the module can no longer be used: create a new' +
        ' one with createBlueprinting()', 'internal');
  }

  // A copy of `value` the module can read without running user code.
  function plain(value) {
    if (Array.isArray(value)) {
      // Longer arrays are refused by the bindings without reading elements.
      return value.length > 16777216 ? value : Array.prototype.slice.call(value);
    }
    if (typeof value == 'object' && value !== null) return Object.assign({}, value);
    return value;
  }

  function guard(name, arity, raw) {
    return function() {
      if (broken) return internalError(name, false);
      var args = [];
      try {
        for (var i = 0; i < arity; ++i) args.push(plain(arguments[i]));
      } catch (e) {
        return failure(name, name + ': an argument could not be read: ' + describe(e),
                       'invalid_value');
      }
      var progressError = null;
      if (name === 'search' && typeof args[3] == 'function') {
        var progress = args[3];
        args[3] = function(fraction) {
          if (progressError) return;
          try {
            progress(fraction);
          } catch (e) {
            progressError = {error: e};
          }
        };
      }
      var stack = stackSave();
      var result;
      try {
        result = raw.apply(null, args);
      } catch (e) {
        broken = describe(e);
        stackRestore(stack);
        return internalError(name, true);
      }
      if (progressError) throw progressError.error;
      return result;
    };
  }

  function installGuards() {
    for (var name in ARITY) {
      var raw = Module[name];
      if (typeof raw != 'function') continue;
      Module[name] = guard(name, ARITY[name], raw);
      // Keep embind's marker of an exported function (its declared number of
      // arguments), which tests/wasm_package/types_test.mjs reads.
      Module[name]['argCount'] = raw['argCount'];
    }
  }

  // Runs after the embind registrations (static constructors) and before the
  // promise returned by createBlueprinting() delivers the module.
  var onRuntimeInitialized = Module['onRuntimeInitialized'];
  Module['onRuntimeInitialized'] = function() {
    installGuards();
    if (onRuntimeInitialized) onRuntimeInitialized();
  };
})();
