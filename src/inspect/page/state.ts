// What the page's views share, owned here: the servers the explorer has, which one is picked, which
// view is shown, the tools each server listed, the message history, and the box a view renders into.
// Only this module assigns `current` and `view`; everyone else reads them (live bindings).

import type { Obj } from "./api.ts";
import { el } from "./dom.ts";

export const VIEWS = ["Overview", "Tools", "Resources", "Prompts", "History"] as const;
export type View = (typeof VIEWS)[number];

export const servers = new Map<string, Obj>();
export let current: string | undefined;
export let view: View = "Tools";
export const toolCache = new Map<string, Obj[]>();
export const history: Obj[] = [];
export const MAX_HISTORY = 1000;

/** Where the shown view renders. */
export const viewBox = el("div", { class: "view" });

export const setCurrent = (id: string): void => {
  current = id;
};
export const setView = (name: View): void => {
  view = name;
};

/** What the shown view holds that must end before it is left (a tool's app); each removes itself. */
export const holders = new Set<() => Promise<void>>();
/** The ends under way: a view drawn while they are waits for them too (a second quick click). */
let ending: Promise<unknown> | undefined;
/** Ends what the shown view holds (each end bounded by its own wait), then runs `next`. */
export function leaveThen(next: () => void): void {
  if (holders.size) {
    // An app that fails its teardown still lets the next view come: a holder's failure is its own.
    const all = Promise.all(
      [...holders].map((end) =>
        Promise.resolve()
          .then(end)
          .catch(() => undefined),
      ),
    ).then(() => undefined);
    ending = all;
    void all.then(() => {
      if (ending === all) ending = undefined;
    });
  }
  if (ending) void ending.then(next);
  else next();
}
