// The prompts view: the prompts listed, a prompt's arguments filled with the server's completions,
// and the messages it gets.

import { errorLine, isObj, type Obj, post, strOf } from "./api.ts";
import { el, fill } from "./dom.ts";
import { completing, listed, split, titledList } from "./resources.ts";
import { contentBlock } from "./result.ts";
import { current, view } from "./state.ts";

export async function promptsView(s: Obj): Promise<void> {
  const server = strOf(s.id);
  const answer = await post("prompts", { server });
  if (current !== server || view !== "Prompts") return;
  const prompts = listed(answer, "prompts");
  const detail = el("div", { class: "detail" });
  const pick = (p: Obj) => {
    const inputs = new Map<string, HTMLInputElement>();
    const values = () => Object.fromEntries([...inputs].map(([k, i]) => [k, i.value]));
    const args = Array.isArray(p.arguments) ? p.arguments.filter(isObj) : [];
    const out = el("section", { class: "result", "aria-label": "Prompt" });
    fill(
      detail,
      el("h2", {}, strOf(p.name)),
      p.description ? el("p", { class: "desc" }, strOf(p.description)) : null,
      args.map((a) => {
        const f = completing(server, { type: "ref/prompt", name: strOf(p.name) }, strOf(a.name), values);
        inputs.set(strOf(a.name), f.input);
        return f.node;
      }),
      el(
        "button",
        {
          type: "button",
          class: "primary",
          onclick: async () => {
            const given: Obj = {};
            for (const [k, v] of Object.entries(values())) if (v !== "") given[k] = v;
            const got = await post("prompt", { server, name: strOf(p.name), args: given });
            const messages =
              got.ok && isObj(got.result) && Array.isArray(got.result.messages)
                ? got.result.messages.filter(isObj)
                : [];
            fill(
              out,
              got.ok
                ? messages.map((m) =>
                    el(
                      "div",
                      { class: "message" },
                      el("strong", {}, strOf(m.role)),
                      contentBlock(m.content ?? null),
                    ),
                  )
                : el("p", { class: "error", role: "alert" }, errorLine(got.error)),
            );
          },
        },
        "Get prompt",
      ),
      out,
    );
  };
  split(
    titledList(
      "Prompts",
      answer,
      prompts.map((p) => el("button", { type: "button", onclick: () => pick(p) }, strOf(p.name))),
    ),
    detail,
  );
}
