// What the core says about its inputs and outputs (`blueprint metadata`, the
// module's metadata(); core/api/metadata.h): every enum's choices, every
// report figure's unit, group, page label and meaning, every spec field's type, kinds,
// alternatives and checked range, every error code's meaning. The page keeps no copy of any of it: it
// loads this once at start and builds its form, selects, units and figure
// groups from it.

import {call} from './dom.js';

export const METADATA_FORMAT = 'blueprinting.metadata/1';

export class Metadata {
  // raw: the parsed JSON of metadata()'s output.
  constructor(raw) {
    if (raw?.format !== METADATA_FORMAT) {
      throw new Error(`metadata(): expected format "${METADATA_FORMAT}", got ` +
                      `${JSON.stringify(raw?.format)}`);
    }
    this.enums = raw.enums ?? {};
    this.figures = raw.figures ?? {};
    this.specFields = raw.spec_fields ?? {};
    this.errorCodes = new Map((Array.isArray(raw.error_codes) ? raw.error_codes : [])
        .map((c) => [c?.name, String(c?.meaning ?? '')]));
  }

  // The one-line meaning of an error's code, or '' (the page's own errors).
  errorMeaning(code) {
    return this.errorCodes.get(code) ?? '';
  }

  // The choices [{name, calculon, meaning}] of the enum `id`, in table order.
  choices(id) {
    const choices = this.enums[id]?.choices;
    if (!Array.isArray(choices)) throw new Error(`metadata(): no enum ${id}`);
    return choices;
  }

  // Whether the enum `id` names the alternatives of a sum type.
  isVariant(id) {
    return Boolean(this.enums[id]?.variant);
  }

  // {type, kinds, choices?, when?, min?, max?, unit?, why?} of a spec path.
  field(path) {
    const field = this.specFields[path];
    if (!field) throw new Error(`metadata(): no spec field ${path}`);
    return field;
  }

  // The choices of the string field `path` (its enum's).
  fieldChoices(path) {
    const id = this.field(path).choices;
    if (!id) throw new Error(`metadata(): spec field ${path} has no choices`);
    return this.choices(id);
  }

  // {unit, group, label, meaning, formula} of a report figure (label: null
  // when the summary does not show it; formula: null for a block figure), or
  // undefined.
  figure(key) {
    return this.figures[key];
  }

  // Whether `spec` has the field `path` (its kind, the alternative of the
  // sum type the field belongs to, and the optional part it is within).
  applies(path, spec) {
    const field = this.specFields[path];
    if (!field) return false;
    if (Array.isArray(field.kinds) && !field.kinds.includes(spec?.kind)) return false;
    if (field.within) {
      let part = spec;
      for (const key of field.within.split('.')) part = part?.[key];
      if (part === null || typeof part !== 'object') return false;
    }
    if (field.when) {
      let value = spec;
      for (const key of field.when.field.split('.')) value = value?.[key];
      if (!field.when.in.includes(value)) return false;
    }
    return true;
  }
}

// Calls bp.metadata() and parses it; throws with the module's message.
export function loadMetadata(bp) {
  const result = call(bp, 'metadata');
  if (!result.ok) {
    throw new Error(`metadata(): ${result.errors.map((e) => e.message).join('; ')}`);
  }
  return new Metadata(JSON.parse(result.output));
}
