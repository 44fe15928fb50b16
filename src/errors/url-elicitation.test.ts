import assert from "node:assert/strict";
import { test } from "node:test";
import { Redactor } from "./redact.ts";
import { RpcReplyError } from "./rpc-reply-error.ts";
import { toPublicError } from "./to-public.ts";
import { MAX_URL_ELICITATIONS, requiredUrlElicitations } from "./url-elicitation.ts";

const secret = "sk-live-0123456789abcdef";
const redactor = new Redactor([secret]);
const url = (id: string, href: string, message: unknown = "Sign in.") => ({
  mode: "url",
  elicitationId: id,
  url: href,
  message,
});

test("S1, S4, S8: a -32042's elicitations are kept checked: http(s) only, no userinfo, secrets redacted, bounded", () => {
  const list = requiredUrlElicitations(
    -32042,
    {
      elicitations: [
        url(
          "a",
          `https://user:pw@auth.example.com/connect?key=${secret}`,
          "Go to https://evil.example/x\nnow",
        ),
        url("b", "javascript:alert(1)"),
        url("c", "file:///etc/passwd"),
        url("d", "not a url"),
        { mode: "form", elicitationId: "e", url: "https://a.example/" },
        url("a", "https://again.example/"),
        url("", "https://empty-id.example/"),
        url("long", `https://a.example/${"x".repeat(3000)}`),
        "junk",
      ],
    },
    redactor,
  );
  assert.deepEqual(list, [
    {
      elicitationId: "a",
      url: "https://auth.example.com/connect?key=[redacted]",
      message: "Go to [url] now",
    },
  ]);
  assert.ok(Object.isFrozen(list));
  const many = Array.from({ length: 40 }, (_, i) => url(`id-${i}`, `https://a.example/${i}`));
  assert.equal(
    requiredUrlElicitations(-32042, { elicitations: many }, redactor)?.length,
    MAX_URL_ELICITATIONS,
  );
  assert.equal(requiredUrlElicitations(-32603, { elicitations: many }, redactor), undefined, "another code");
  assert.equal(
    requiredUrlElicitations(-32042, { elicitations: [url("b", "javascript:x")] }, redactor),
    undefined,
  );
  assert.equal(requiredUrlElicitations(-32042, undefined, redactor), undefined);
});

test("S1: a -32042 becomes a TetherError whose list is in process only; its record carries the count alone", () => {
  const reply = new RpcReplyError({
    code: -32042,
    message: "URL elicitation required",
    data: { elicitations: [url("a", "https://auth.example.com/connect?step=2")] },
  });
  const e = toPublicError(reply, { stage: "call", phase: "call", redactor });
  assert.equal(e.code, "remote_error");
  assert.deepEqual(e.urlElicitations, [
    { elicitationId: "a", url: "https://auth.example.com/connect?step=2", message: "Sign in." },
  ]);
  const record = JSON.stringify(e.toJSON());
  assert.equal(e.toJSON().urlsRequired, 1);
  assert.doesNotMatch(record, /auth\.example\.com|elicitationId/);
  assert.doesNotMatch(e.message, /auth\.example\.com/);
  const plain = toPublicError(new RpcReplyError({ code: -32603, message: "x" }), {
    stage: "call",
    phase: "call",
  });
  assert.equal(plain.urlElicitations, undefined);
  assert.equal("urlsRequired" in plain.toJSON(), false);
});
