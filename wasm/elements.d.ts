// Types of blueprinting/elements (web/elements.js): four custom elements for
// docs pages, defined when the module is imported in a browser.

/** What every element shares: its spec source and its state. */
export declare class BlueprintElement extends HTMLElement {
  /** The key elements of one spec share (a URL, a launch line, a JSON text). */
  readonly specKey: string | null;
  /** Re-renders on the next microtask (attributes already do this). */
  requestRender(): void;
}

/** `<blueprint-figure spec="URL" figure="total_time">`: one report figure. */
export declare class BlueprintFigure extends BlueprintElement {
  /** The figure as a number, exactly as the report has it; null when none. */
  readonly value: number | null;
  /** The figure's text in the report (`blueprint analyze`); null when none. */
  readonly literal: string | null;
}

/** `<blueprint-schedule>`: the simulated pipeline timeline, with a table. */
export declare class BlueprintSchedule extends BlueprintElement {}

/** `<blueprint-memory>`: per-stage memory against the capacity. */
export declare class BlueprintMemory extends BlueprintElement {}

/** `<blueprint-mapping>`: an editable card; edits re-render its spec's elements. */
export declare class BlueprintMapping extends BlueprintElement {}

/** The tag names and their classes. */
export declare const ELEMENTS: {
  'blueprint-figure': typeof BlueprintFigure;
  'blueprint-schedule': typeof BlueprintSchedule;
  'blueprint-memory': typeof BlueprintMemory;
  'blueprint-mapping': typeof BlueprintMapping;
};

/** The words of a Megatron-LM launch line ('...' and "..." quote). */
export declare function launchWords(line: string): string[];

declare global {
  interface HTMLElementTagNameMap {
    'blueprint-figure': BlueprintFigure;
    'blueprint-schedule': BlueprintSchedule;
    'blueprint-memory': BlueprintMemory;
    'blueprint-mapping': BlueprintMapping;
  }
}
