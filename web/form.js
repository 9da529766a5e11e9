// The strategy and model form: one labelled control per field of
// formFields() (web/spec.js: the page's layout and labels, the core's
// types, choices and ranges), its error line right below it
// (aria-describedby), kept in sync with the spec.

import {fill, getPath, h} from './dom.js';
import {fieldForError, stageLayoutChoice} from './spec.js';

// Reads a control: {value} or {problem} (text the core would reject anyway
// is caught here so the spec, and the URL, stay well-typed).
function readControl(field, control) {
  switch (field.type) {
    case 'bool':
    case 'present':
      return {value: control.checked};
    case 'num': {
      const text = control.value.trim();
      const value = Number(text);
      if (text === '' || !Number.isFinite(value)) return {problem: 'enter a number'};
      return {value};
    }
    case 'text':
      return {value: control.value};
    case 'select':
      return {value: field.nullable && control.value === '' ? null : control.value};
    case 'tier':
      return {value: Number(control.value)};
    case 'layout':
      return {value: control.value};
    case 'list': {
      // Whole numbers separated by commas (or spaces); the checker judges
      // their count, signs and sum.
      const words = control.value.split(/[\s,]+/).filter((w) => w !== '');
      if (words.length === 0) return {problem: 'enter the blocks of each stage, e.g. 3, 4, 4, 3'};
      if (!words.every((w) => /^-?\d+$/.test(w))) {
        return {problem: 'enter whole numbers separated by commas'};
      }
      const value = words.map(Number);
      if (!value.every(Number.isSafeInteger)) return {problem: 'too large a number'};
      return {value};
    }
    case 'int': {
      const text = control.value.trim();
      if (!/^-?\d+$/.test(text)) return {problem: 'enter a whole number'};
      const value = Number(text);
      if (!Number.isSafeInteger(value)) return {problem: 'too large a number'};
      return {value};
    }
  }
  return {problem: 'unknown field'};
}

function tierOptions(system, current) {
  // A hostile link may list thousands of tiers: offer the first 64.
  const networks = Array.isArray(system?.networks) ? system.networks.slice(0, 64) : [];
  const options = networks.map((n, i) =>
    [i, `${i}: ${n?.size ?? '?'} × ${n?.bandwidth ?? '?'} GB/s`]);
  if (Number.isSafeInteger(current) && !(current >= 0 && current < networks.length)) {
    options.push([current, `${current}: not in this system`]);
  }
  return options;
}

export class SpecForm {
  // fields: formFields(metadata); containers: {section name: element};
  // onChange(path, value) is called for every valid edit.
  constructor(fields, containers, onChange) {
    this.onChange = onChange;
    this.controls = new Map();  // path -> {field, control, wrapper, error}
    for (const field of fields) {
      const id = `f-${field.path.replaceAll('.', '-')}`;
      const error = h('p', {class: 'field-error', id: `${id}-error`, 'aria-live': 'polite'});
      let control;
      if (field.type === 'bool' || field.type === 'present') {
        control = h('input', {type: 'checkbox', id, 'aria-describedby': error.id});
      } else if (field.type === 'num') {
        control = h('input', {type: 'text', inputmode: 'decimal', id, autocomplete: 'off',
                              spellcheck: 'false', maxlength: 32,
                              'aria-describedby': error.id});
      } else if (field.type === 'select' || field.type === 'tier' || field.type === 'layout') {
        control = h('select', {id, 'aria-describedby': error.id},
                    (field.options ?? []).map(([v, label, meaning]) =>
                      h('option', {value: v, title: meaning}, label)));
      } else if (field.type === 'int') {
        // The checker's range (metadata) as min/max; the core still judges
        // every value, so its error lines are the CLI's.
        control = h('input', {type: 'number', step: 1, min: field.min, max: field.max,
                              inputmode: 'numeric', id, autocomplete: 'off',
                              spellcheck: 'false', title: field.why,
                              'aria-describedby': error.id});
      } else if (field.type === 'list') {
        // p * v numbers (at most 4096 of 2^31: well within 64k characters).
        control = h('input', {type: 'text', inputmode: 'numeric', id, autocomplete: 'off',
                              spellcheck: 'false', maxlength: 65536,
                              'aria-describedby': error.id});
      } else {
        control = h('input', {type: 'text', id, autocomplete: 'off', maxlength: 200,
                              'aria-describedby': error.id});
      }
      const label = h('label', {for: id}, field.label);
      const hint = field.hint ? h('p', {class: 'hint', id: `${id}-hint`}, field.hint) : null;
      if (hint) control.setAttribute('aria-describedby', `${error.id} ${hint.id}`);
      const wrapper = h('div', {class: `field field-${field.type}`},
                        ...(field.type === 'bool' || field.type === 'present'
                            ? [control, label] : [label, control]), error, hint);
      const event = ['bool', 'present', 'select', 'tier', 'layout'].includes(field.type)
          ? 'change' : 'input';
      control.addEventListener(event, () => this.edited(field.path));
      containers[field.section].append(wrapper);
      this.controls.set(field.path, {field, control, wrapper, error, local: null});
    }
  }

  edited(path) {
    const entry = this.controls.get(path);
    const {value, problem} = readControl(entry.field, entry.control);
    entry.local = problem ?? null;
    if (problem) {
      this.showError(entry, [problem]);
      this.onChange(null, null);
    } else {
      this.onChange(path, value);
    }
  }

  // Whether some control holds text that is not in the spec.
  hasLocalProblems() {
    return [...this.controls.values()].some((e) => e.local && !e.wrapper.hidden);
  }

  // Shows `spec`: visibility of kind- and type-dependent fields, values
  // (except in the control being typed in), network tier choices.
  show(spec, {force = false} = {}) {
    for (const entry of this.controls.values()) {
      const {field, control, wrapper} = entry;
      const visible = !field.when || field.when(spec);
      wrapper.hidden = !visible;
      if (!visible) continue;
      const value = field.type === 'layout' ? stageLayoutChoice(getPath(spec, 'parallelism.pipeline'))
                                            : getPath(spec, field.path);
      if (field.type === 'tier') {
        const options = tierOptions(spec.system, value);
        const key = JSON.stringify(options);
        if (control.dataset.options !== key) {
          fill(control, options.map(([v, label]) => h('option', {value: v}, label)));
          control.dataset.options = key;
        }
      }
      if (!force && document.activeElement === control && entry.local === null &&
          field.type !== 'bool' && field.type !== 'present') {
        continue;
      }
      if (force) entry.local = null;
      if (field.type === 'bool') control.checked = value === true;
      else if (field.type === 'present') control.checked = value !== null && value !== undefined;
      else if (field.type === 'list') {
        if (entry.local === null) control.value = Array.isArray(value) ? value.join(', ') : '';
      } else if (entry.local === null) control.value = String(value ?? '');
      if (field.type === 'select' || field.type === 'layout') {
        // The meaning of the chosen value, from the core's enum table.
        const meaning = field.options.find(([v]) => v === value)?.[2] ?? '';
        if (control.title !== meaning) control.title = meaning;
      }
    }
  }

  showError(entry, lines) {
    entry.error.textContent = lines.join('\n');
    entry.wrapper.classList.toggle('invalid', lines.length > 0);
    entry.control.setAttribute('aria-invalid', lines.length ? 'true' : 'false');
  }

  // Puts each error ({field, message, code}) next to its field; returns the
  // errors no visible field claims.
  showErrors(errors) {
    const visible = [...this.controls.values()].filter((e) => !e.wrapper.hidden);
    const byField = new Map(visible.map((e) => [e, e.local ? [e.local] : []]));
    const rest = [];
    for (const error of errors) {
      const field = fieldForError(error, visible.map((e) => e.field));
      if (field) byField.get(this.controls.get(field.path)).push(error.message);
      else rest.push(error);
    }
    for (const [entry, entryLines] of byField) this.showError(entry, entryLines);
    return rest;
  }
}
