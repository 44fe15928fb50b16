// The server's questions, one dialog at a time: an elicitation (a form or a link to open), a
// sampling request (a person writes the reply). Escape answers as the dialog's own way out.

import { isObj, type Obj, post, strOf } from "./api.ts";
import { el, fill, uid } from "./dom.ts";
import { schemaForm } from "./form.ts";
import { contentBlock } from "./result.ts";

const asks: Obj[] = [];
export const dialog = el("dialog", { class: "ask", "aria-modal": "true" });

/** An elicitation's three answers: Accept (as `accept` does it), Decline, Cancel. */
function elicitationAnswers(reply: (answer: Obj) => Promise<void>, accept: () => void): HTMLElement {
  return el(
    "div",
    { class: "row" },
    el("button", { type: "button", class: "primary", onclick: accept }, "Accept"),
    el("button", { type: "button", onclick: () => reply({ action: "decline" }) }, "Decline"),
    el("button", { type: "button", onclick: () => reply({ action: "cancel" }) }, "Cancel"),
  );
}

/** What Escape does in the open dialog. */
let onEscape: (() => void) | undefined;
dialog.addEventListener("cancel", (event) => {
  event.preventDefault();
  onEscape?.();
});

function nextAsk(): void {
  if (dialog.open || !asks.length) return;
  const ask = asks[0]!;
  const server = strOf(ask.server);
  const params = isObj(ask.params) ? ask.params : {};
  const reply = async (answer: Obj | null) => {
    asks.shift();
    dialog.close();
    dialog.replaceChildren();
    await post("answer", { server, ask: strOf(ask.ask), answer });
    nextAsk();
  };
  // Escape answers as the dialog's own way out: sampling declined, elicitation cancelled.
  onEscape = () => void reply(ask.type === "sampling" ? null : { action: "cancel" });
  const titleId = uid();
  if (ask.type === "sampling") {
    const replyId = uid();
    const text = el("textarea", { id: replyId, rows: 4 });
    const messages = Array.isArray(params.messages) ? params.messages.filter(isObj) : [];
    fill(
      dialog,
      el("h2", { id: titleId }, "The server asks for a completion (sampling)"),
      params.systemPrompt ? el("pre", { class: "text" }, strOf(params.systemPrompt)) : null,
      messages.map((m) =>
        el(
          "div",
          { class: "message" },
          el("strong", {}, strOf(m.role)),
          Array.isArray(m.content) ? m.content.map(contentBlock) : contentBlock(m.content ?? null),
        ),
      ),
      el("label", { for: replyId }, "Reply"),
      text,
      el(
        "div",
        { class: "row" },
        el(
          "button",
          {
            type: "button",
            class: "primary",
            onclick: () =>
              reply({
                role: "assistant",
                content: { type: "text", text: text.value },
                model: "tether-inspect (a person)",
                stopReason: "endTurn",
              }),
          },
          "Send reply",
        ),
        el("button", { type: "button", onclick: () => reply(null) }, "Decline"),
      ),
    );
  } else if (params.mode === "url") {
    const url = strOf(params.url);
    const safe = /^https?:\/\//i.test(url);
    fill(
      dialog,
      el("h2", { id: titleId }, "The server asks you to open a link"),
      el("p", {}, strOf(params.message)),
      el("p", { class: "url" }, url),
      safe
        ? el("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, "Open the link")
        : el("p", { class: "muted" }, "(not an http(s) link: not opened)"),
      elicitationAnswers(reply, () => reply({ action: "accept" })),
    );
  } else {
    const form = schemaForm(params.requestedSchema ?? {});
    const problem = el("p", { class: "error", role: "alert", hidden: true });
    fill(
      dialog,
      el("h2", { id: titleId }, "The server asks (elicitation)"),
      el("p", {}, strOf(params.message)),
      form.node,
      problem,
      elicitationAnswers(reply, () => {
        const got = form.read();
        problem.hidden = !got.error;
        problem.textContent = got.error ?? "";
        if (!got.error) void reply({ action: "accept", content: got.value ?? {} });
      }),
    );
  }
  dialog.setAttribute("aria-labelledby", titleId);
  dialog.showModal();
}

/** A question from a server: asked now, or once the ones before it are answered. */
export function queueAsk(item: Obj): void {
  asks.push(item);
  nextAsk();
}

/** A question answered elsewhere (or given up): its dialog closes, or it leaves the queue. */
export function askDone(item: Obj): void {
  const i = asks.findIndex((a) => a.ask === item.ask);
  if (i === 0 && dialog.open) {
    asks.shift();
    dialog.close();
    dialog.replaceChildren();
    nextAsk();
  } else if (i > 0) asks.splice(i, 1);
}
