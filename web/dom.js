// Tiny DOM builders. Text only ever goes in through textContent or attribute
// values, never as HTML, so user and derived text cannot become markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

function build(element, attrs, children) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) {
      element.addEventListener(name.slice(2), value);
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

// h('p', {class: 'x'}, 'text', h('b', {}, 'bold')): an HTML element.
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// s('rect', {x: 0, ...}): an SVG element.
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function byId(id) {
  return document.getElementById(id);
}

// Replaces the children of `element`.
export function fill(element, ...children) {
  element.replaceChildren();
  return build(element, {}, children);
}

// One error as the page uses it: {field, message, code} (field '' for none;
// code one of metadata()'s error_codes, '' for the page's own errors).
export function asError(error) {
  if (error && typeof error === 'object') {
    return {field: String(error.field ?? ''), message: String(error.message ?? ''),
            code: String(error.code ?? '')};
  }
  return {field: '', message: String(error), code: ''};
}

// The module's methods return {ok, output, errors: [{field, message, code}], notes: [string]}.
function toErrors(list) {
  if (Array.isArray(list)) return list.map(asError);
  return list === undefined || list === null ? [] : [asError(list)];
}

// Calls bp[name](...args) and always returns {ok, output, errors, notes}.
export function call(bp, name, ...args) {
  if (!bp || typeof bp[name] !== 'function') {
    return {ok: false, output: '', errors: [asError(`this build of the module has no ${name}()`)],
            notes: []};
  }
  try {
    const result = bp[name](...args);
    if (typeof result === 'string') return {ok: true, output: result, errors: [], notes: []};
    return {ok: Boolean(result?.ok), output: String(result?.output ?? ''),
            errors: toErrors(result?.errors),
            notes: Array.isArray(result?.notes) ? result.notes.map(String) : []};
  } catch (e) {
    return {ok: false, output: '', errors: [asError(`${name}() failed: ${e?.message ?? e}`)],
            notes: []};
  }
}

// A spec's value at a dotted path ("parallelism.tensor.degree"), or
// undefined where the path leaves the objects.
export function getPath(object, path) {
  let value = object;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) {
      return undefined;
    }
    value = value[key];
  }
  return value;
}

// Sets the value at a dotted path whose parent objects exist.
export function setPath(object, path, value) {
  const keys = path.split('.');
  let target = object;
  for (const key of keys.slice(0, -1)) target = target[key];
  target[keys.at(-1)] = value;
}
