// The overview of one server: its facts, the connect error, the establishment timeline, what it
// declared, and the roots offered to it.

import { isObj, type Json, type Obj, post, strOf } from "./api.ts";
import { el, fill, tree, uid } from "./dom.ts";
import { viewBox } from "./state.ts";

export function overview(s: Obj): void {
  const id = strOf(s.id);
  const info = isObj(s.serverInfo) ? s.serverInfo : {};
  const e = s.error;
  fill(
    viewBox,
    el("h2", {}, strOf(s.name)),
    el(
      "div",
      { class: "row" },
      el(
        "button",
        { type: "button", onclick: () => post("reconnect", { server: id }) },
        s.state === "open" ? "Reconnect" : "Connect",
      ),
      el(
        "button",
        { type: "button", onclick: () => post("disconnect", { server: id }), disabled: s.state !== "open" },
        "Disconnect",
      ),
    ),
    el(
      "dl",
      { class: "facts" },
      [
        ["State", strOf(s.state)],
        ["Server", `${strOf(info.name, "?")} ${strOf(info.version)}`],
        ["Protocol", `${strOf(s.era)} ${strOf(s.protocolVersion)}`],
        ["Transport", strOf(s.transport)],
        ["Source", strOf(s.source)],
        ["Attempts", String(s.attempts ?? "")],
      ].flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]),
    ),
    isObj(e)
      ? el(
          "section",
          { class: "failed", "aria-label": "Connect error" },
          el("h3", {}, "The connect failed"),
          el(
            "dl",
            { class: "facts" },
            ["code", "reason", "stage", "phase", "message", "hint"].flatMap((k) => [
              el("dt", {}, k),
              el("dd", {}, strOf(e[k], String(e[k] ?? ""))),
            ]),
          ),
        )
      : null,
    el(
      "section",
      { "aria-label": "Establishment timeline" },
      el("h3", {}, "Establishment timeline"),
      timeline(Array.isArray(s.timeline) ? s.timeline : []),
    ),
    s.instructions ? part("Instructions", el("pre", { class: "text" }, strOf(s.instructions))) : null,
    s.capabilities ? part("Capabilities", tree(s.capabilities, "capabilities")) : null,
    s.extensions ? part("Extensions", tree(s.extensions, "extensions")) : null,
    rootsEditor(s),
  );
}

/** A titled part of the overview, a region named by its title. */
const part = (title: string, body: Node): HTMLElement =>
  el("section", { "aria-label": title }, el("h3", {}, title), body);

function timeline(events: Json[]): HTMLElement {
  const ends = events.filter(
    (e): e is Obj => isObj(e) && (e.type === "stage_end" || e.type === "attempt_end"),
  );
  const total = Math.max(1, ...events.filter(isObj).map((e) => Number(e.elapsedMs) || 0));
  if (!ends.length) return el("p", { class: "muted" }, "No establishment yet.");
  const rows = events.filter(isObj).flatMap((e) => {
    if (e.type === "stage_end") {
      const dur = Number(e.durationMs) || 0;
      const start = (Number(e.elapsedMs) || 0) - dur;
      const bar = el("div", { class: `bar ${e.ok ? "ok" : "bad"}` });
      bar.style.setProperty("margin-left", `${(start / total) * 100}%`);
      bar.style.setProperty("width", `${Math.max(0.5, (dur / total) * 100)}%`);
      return [
        el(
          "li",
          { class: "stage" },
          el("span", { class: "label" }, `attempt ${String(e.attempt)} · ${strOf(e.stage)}`),
          el("span", { class: "track" }, bar),
          el(
            "span",
            { class: "ms" },
            `${start.toFixed(1)} + ${dur.toFixed(1)} ms ${e.ok ? "ok" : `failed: ${strOf(e.code)}/${strOf(e.reason)}`}`,
          ),
        ),
      ];
    }
    if (e.type === "recovery" || e.type === "era_evidence" || e.type === "established")
      return [
        el(
          "li",
          { class: "event" },
          `${(Number(e.elapsedMs) || 0).toFixed(1)} ms · ${strOf(e.type)} ${strOf(e.decision ?? e.evidence ?? e.protocolVersion)} ${strOf(e.why ?? e.era)}`,
        ),
      ];
    return [];
  });
  return el("ol", { class: "timeline" }, rows);
}

function rootsEditor(s: Obj): HTMLElement {
  const id = strOf(s.id);
  const roots = Array.isArray(s.roots) ? s.roots.filter(isObj) : [];
  const areaId = uid();
  const area = el(
    "textarea",
    { id: areaId, rows: 3, spellcheck: "false" },
    roots.map((r) => strOf(r.uri)).join("\n"),
  );
  return el(
    "section",
    { "aria-label": "Roots" },
    el("h3", {}, "Roots"),
    el("label", { for: areaId }, "Roots offered to the server, one URI a line"),
    area,
    el(
      "button",
      {
        type: "button",
        onclick: () =>
          post("roots", {
            server: id,
            roots: area.value
              .split("\n")
              .map((l) => l.trim())
              .filter(Boolean)
              .map((uri) => ({ uri })),
          }),
      },
      "Save roots",
    ),
  );
}
