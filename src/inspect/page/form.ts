// A form built from a JSON Schema (a tool's input schema, an elicitation's requested schema):
// strings, numbers and integers with their bounds, booleans, enums as a choice, arrays, nested
// objects; anything else as JSON text. Each input is labelled with its argument's name.
import { isObj, type Json, type Obj } from "./api.ts";
import { el, uid } from "./dom.ts";

type Read = { value?: Json; error?: string };
interface Field {
  node: HTMLElement;
  read(): Read;
}

const typesOf = (s: Obj): string[] => {
  const t = s.type;
  const out =
    typeof t === "string" ? [t] : Array.isArray(t) ? t.filter((x): x is string => typeof x === "string") : [];
  for (const list of [s.anyOf, s.oneOf])
    if (Array.isArray(list)) for (const m of list) if (isObj(m)) out.push(...typesOf(m));
  return out;
};

/** The members of an enum (or of anyOf/oneOf consts), when the schema lists them. */
export function enumOf(s: Obj): Json[] | undefined {
  if (Array.isArray(s.enum)) return s.enum;
  const out: Json[] = [];
  for (const list of [s.anyOf, s.oneOf]) {
    if (!Array.isArray(list)) continue;
    for (const m of list) {
      if (isObj(m) && m.const !== undefined) out.push(m.const);
      else return undefined;
    }
  }
  return out.length ? out : undefined;
}

const shown = (v: Json) => (typeof v === "string" ? v : JSON.stringify(v));

/** What each member of an enum is called: its `title` (oneOf/anyOf consts), `enumNames`, or itself. */
function namesOf(s: Obj, members: Json[]): string[] {
  const titled = new Map<string, string>();
  for (const list of [s.anyOf, s.oneOf])
    if (Array.isArray(list))
      for (const m of list)
        if (isObj(m) && typeof m.title === "string") titled.set(shown(m.const ?? null), m.title);
  const names = Array.isArray(s.enumNames) ? s.enumNames : [];
  return members.map((m, i) => titled.get(shown(m)) ?? (typeof names[i] === "string" ? names[i] : shown(m)));
}

function labelled(name: string, id: string, s: Obj, required: boolean, input: HTMLElement): HTMLElement {
  const about =
    typeof s.description === "string" ? s.description : typeof s.title === "string" ? s.title : "";
  const descId = about ? uid("d") : undefined;
  if (descId) input.setAttribute("aria-describedby", descId);
  return el(
    "div",
    { class: "field" },
    el("label", { for: id }, name),
    required ? el("span", { class: "req", "aria-hidden": "true" }, " *") : null,
    el("span", { class: "type" }, ` ${typesOf(s).join(" | ") || (enumOf(s) ? "choice" : "json")}`),
    input,
    about ? el("div", { class: "desc", id: descId }, about) : null,
  );
}

function field(name: string, schema: Json, required: boolean): Field {
  const s = isObj(schema) ? schema : {};
  const id = uid();
  const types = typesOf(s);
  const members = enumOf(s);
  const dflt = s.default;
  if (members) {
    const names = namesOf(s, members);
    const select = el(
      "select",
      { id, required },
      required ? null : el("option", { value: "" }, "(none)"),
      members.map((m, i) =>
        el(
          "option",
          { value: String(i), selected: dflt !== undefined && shown(m) === shown(dflt) },
          names[i],
        ),
      ),
    );
    return {
      node: labelled(name, id, s, required, select),
      read: () => (select.value === "" ? {} : { value: members[Number(select.value)] ?? null }),
    };
  }
  if (types.includes("boolean") && types.every((t) => t === "boolean" || t === "null")) {
    const box = el("input", { id, type: "checkbox", checked: dflt === true });
    let touched = false;
    box.addEventListener("change", () => {
      touched = true;
    });
    return {
      node: labelled(name, id, s, required, box),
      read: () => (touched || required || dflt !== undefined ? { value: box.checked } : {}),
    };
  }
  if ((types.includes("number") || types.includes("integer")) && !types.includes("string")) {
    const integer = !types.includes("number");
    const input = el("input", {
      id,
      type: "number",
      inputmode: integer ? "numeric" : "decimal",
      step: integer ? 1 : "any",
      min: typeof s.minimum === "number" ? s.minimum : undefined,
      max: typeof s.maximum === "number" ? s.maximum : undefined,
      value: typeof dflt === "number" ? dflt : undefined,
    });
    return {
      node: labelled(name, id, s, required, input),
      read: () => {
        const text = input.value.trim();
        if (text === "") return required ? { error: `${name} is required` } : {};
        const n = Number(text);
        if (!Number.isFinite(n)) return { error: `${name} takes ${integer ? "an integer" : "a number"}` };
        if (integer && !Number.isSafeInteger(n)) return { error: `${name} takes an integer` };
        if (typeof s.minimum === "number" && n < s.minimum)
          return { error: `${name} must be at least ${s.minimum}` };
        if (typeof s.maximum === "number" && n > s.maximum)
          return { error: `${name} must be at most ${s.maximum}` };
        if (typeof s.exclusiveMinimum === "number" && n <= s.exclusiveMinimum)
          return { error: `${name} must be more than ${s.exclusiveMinimum}` };
        if (typeof s.exclusiveMaximum === "number" && n >= s.exclusiveMaximum)
          return { error: `${name} must be less than ${s.exclusiveMaximum}` };
        return { value: n };
      },
    };
  }
  const itemMembers = isObj(s.items) ? enumOf(s.items) : undefined;
  if (types.length === 1 && types[0] === "array" && isObj(s.items) && itemMembers) {
    // A multiple choice: one checkbox a member, each labelled with its name.
    const names = namesOf(s.items, itemMembers);
    const chosen = new Set((Array.isArray(dflt) ? dflt : []).map(shown));
    const boxes = itemMembers.map((m, i) => {
      const boxId = uid();
      const box = el("input", { id: boxId, type: "checkbox", checked: chosen.has(shown(m)) });
      return { box, node: el("span", { class: "choice" }, box, el("label", { for: boxId }, names[i])) };
    });
    return {
      node: el(
        "fieldset",
        { class: "choices" },
        el("legend", {}, name),
        boxes.map((b) => b.node),
      ),
      read: () => {
        const out = itemMembers.filter((_, i) => boxes[i]!.box.checked);
        return out.length || required ? { value: out } : {};
      },
    };
  }
  if (types.length === 1 && types[0] === "array" && isObj(s.items)) {
    const items = s.items;
    const rows: Field[] = [];
    const list = el("div", { class: "items" });
    const add = (): void => {
      const row = field(`${name}[${rows.length}]`, items, true);
      const wrap = el("div", { class: "item" }, row.node);
      const remove = el("button", { type: "button", "aria-label": `Remove ${name} item` }, "Remove");
      remove.addEventListener("click", () => {
        rows.splice(rows.indexOf(row), 1);
        wrap.remove();
      });
      wrap.append(remove);
      rows.push(row);
      list.append(wrap);
    };
    const node = el(
      "fieldset",
      { class: "array" },
      el("legend", {}, name, el("span", { class: "type" }, " array")),
      list,
      el("button", { type: "button", onclick: add, "aria-label": `Add ${name} item` }, "Add item"),
    );
    return {
      node,
      read: () => {
        const out: Json[] = [];
        for (const r of rows) {
          const got = r.read();
          if (got.error) return got;
          if (got.value !== undefined) out.push(got.value);
        }
        return out.length || required ? { value: out } : {};
      },
    };
  }
  if (types.length === 1 && types[0] === "object" && isObj(s.properties)) {
    const form = objectFields(s);
    const node = el("fieldset", { class: "object" }, el("legend", {}, name), form.nodes);
    return {
      node,
      read: () => {
        const got = form.read();
        if (got.error) return got;
        return got.value && Object.keys(got.value).length === 0 && !required
          ? {}
          : { value: got.value ?? {} };
      },
    };
  }
  if (types.length > 0 && types.every((t) => t === "string")) {
    const input = el("input", {
      id,
      type: "text",
      value: typeof dflt === "string" ? dflt : undefined,
      maxlength: typeof s.maxLength === "number" ? s.maxLength : undefined,
    });
    return {
      node: labelled(name, id, s, required, input),
      read: () =>
        input.value === "" ? (required ? { error: `${name} is required` } : {}) : { value: input.value },
    };
  }
  // What a form cannot express: JSON text.
  const area = el(
    "textarea",
    { id, rows: 3, spellcheck: "false", class: "json" },
    dflt !== undefined ? JSON.stringify(dflt) : "",
  );
  return {
    node: labelled(name, id, s, required, area),
    read: () => {
      const text = area.value.trim();
      if (text === "") return required ? { error: `${name} is required` } : {};
      try {
        return { value: JSON.parse(text) as Json };
      } catch {
        return { error: `${name} is not valid JSON` };
      }
    },
  };
}

function objectFields(schema: Obj): {
  nodes: HTMLElement[];
  /** The values; the first problem instead, unless `lenient` (then what is valid). */
  read(lenient?: boolean): { value?: Obj; error?: string };
} {
  const props = isObj(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const fields = Object.entries(props).map(
    ([name, s]) => [name, field(name, s, required.has(name))] as const,
  );
  return {
    nodes: fields.map(([, f]) => f.node),
    read: (lenient = false) => {
      const out: Obj = {};
      for (const [name, f] of fields) {
        const got = f.read();
        if (got.error && !lenient) return { error: got.error };
        if (got.value !== undefined) out[name] = got.value;
      }
      return { value: out };
    },
  };
}

/** A form for an object schema, with a JSON editor beside it for what it cannot express. */
export function schemaForm(schema: Json): { node: HTMLElement; read(): { value?: Obj; error?: string } } {
  const s = isObj(schema) ? schema : {};
  const form = objectFields(s);
  const fields = el(
    "div",
    { class: "fields" },
    form.nodes.length ? form.nodes : el("p", { class: "muted" }, "No arguments."),
  );
  const jsonId = uid();
  const area = el("textarea", { id: jsonId, rows: 6, spellcheck: "false", class: "json" });
  const jsonBox = el(
    "div",
    { class: "field", hidden: true },
    el("label", { for: jsonId }, "Arguments as JSON"),
    area,
  );
  const toggle = el("input", { type: "checkbox", id: uid() });
  toggle.addEventListener("change", () => {
    if (toggle.checked) {
      // What is filled so far carries over, missing or not.
      area.value = JSON.stringify(form.read(true).value ?? {}, null, 2);
    }
    fields.hidden = toggle.checked;
    jsonBox.hidden = !toggle.checked;
  });
  const node = el(
    "div",
    { class: "schema-form" },
    el("div", { class: "mode" }, toggle, el("label", { for: toggle.id }, "Edit as JSON")),
    fields,
    jsonBox,
  );
  return {
    node,
    read: () => {
      if (!toggle.checked) return form.read();
      try {
        const v = JSON.parse(area.value || "{}") as Json;
        return isObj(v) ? { value: v } : { error: "the arguments must be a JSON object" };
      } catch {
        return { error: "the arguments are not valid JSON" };
      }
    },
  };
}
