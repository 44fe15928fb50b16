import assert from "node:assert/strict";
import { test } from "node:test";
import { environmentSecrets, Redactor, secretsOf } from "./redact.ts";
import { TetherError } from "./tether-error.ts";

const CANARY = "canary-7f3a9c2e-secret";

test("X2: a secret is redacted in plain, URL-encoded and base64 forms", () => {
  const r = new Redactor([`${CANARY}/+=`]);
  for (const form of [
    `${CANARY}/+=`,
    encodeURIComponent(`${CANARY}/+=`),
    Buffer.from(`${CANARY}/+=`).toString("base64"),
  ]) {
    assert.doesNotMatch(r.scrub(`before ${form} after`), /canary-7f3a9c2e/);
  }
});

test("X2: URLs and auth-scheme credentials are removed even when no secret is configured", () => {
  const r = new Redactor();
  const out = r.scrub("see https://host/path?token=abc and Authorization: Bearer abc.def-ghi");
  assert.doesNotMatch(out, /host\/path|abc\.def-ghi|token=abc/);
});

test("X2: server text is folded, redacted and truncated", () => {
  const r = new Redactor([CANARY]);
  const text = r.serverText(`line1\nline2 ${CANARY} ${"x".repeat(1000)}`);
  assert.ok(text);
  assert.ok(!text.includes("\n"));
  assert.ok(!text.includes(CANARY));
  assert.ok(text.length <= 301);
});

test("X1: toJSON carries the record's fields and nothing of the cause", () => {
  const cause = new Error(`upstream said ${CANARY} at https://secret.example/x`);
  const e = new TetherError({
    code: "upstream",
    reason: "http_502",
    stage: "http_request",
    phase: "discovery",
    message: "the server failed (HTTP 502)",
    httpStatus: 502,
    rpcMessage: `bad ${CANARY}`,
    cause,
    redactor: new Redactor([CANARY]),
  });
  const record = e.toJSON();
  assert.equal(record.type, "error");
  assert.equal(record.code, "upstream");
  assert.equal(record.httpStatus, 502);
  assert.equal(record.observedBytes, null);
  assert.equal(e.cause, cause);
  const text = JSON.stringify(record) + e.message;
  assert.ok(!text.includes(CANARY));
  assert.ok(!text.includes("secret.example"));
  assert.ok(!("stack" in record));
});

test("X3: the tool-result projection carries the record and a scrubbed text", () => {
  const e = new TetherError({
    code: "limit",
    reason: "response_too_large",
    stage: "call",
    phase: "call",
    message: `the reply passed the 10-byte ceiling ${CANARY}`,
    observedBytes: 11,
    limits: { maxBytes: 10 },
    effect: "unknown",
    redactor: new Redactor([CANARY]),
  });
  const result = e.toToolResult();
  assert.equal(result.isError, true);
  assert.equal(result.content[0].type, "text");
  assert.match(result.content[0].text, /will not help/);
  assert.deepEqual(result.structuredContent, e.toJSON());
  assert.ok(!JSON.stringify(result).includes(CANARY));
});

test("X2: a secret learned after construction is scrubbed by every holder, in its echoed forms too", () => {
  const redactor = new Redactor();
  const holder = { redactor };
  const token = "at-LEARNED-4f9c2e71b3";
  assert.equal(holder.redactor.scrub(`x ${token}`), `x ${token}`);
  redactor.learn([token, "ab"]);
  assert.equal(holder.redactor.scrub(`x ${token} y`), "x [redacted] y");
  const b64 = Buffer.from(token).toString("base64").replace(/=+$/, "");
  assert.equal(holder.redactor.scrub(b64), "[redacted]");
  assert.equal(holder.redactor.scrub("ab"), "ab", "too short to be searched for");
});

test("X2: auth-scheme words are prose unless a credential-shaped value follows", () => {
  const r = new Redactor();
  const cases: [string, string][] = [
    ["no token is stored", "no token is stored"],
    ["Token expired.", "Token expired."],
    ["the token expired.", "the token expired."],
    ["Bearer authentication-required", "Bearer authentication-required"],
    ["basic setup done", "basic setup done"],
    ["Authorization: Bearer abc.def-ghi", "Authorization: Bearer [redacted]"],
    ["bearer eyJhbGciOi.eyJzdWIiOiIx.sig-nature_1", "bearer [redacted]"],
    ["Basic dXNlcjpwYXNz", "Basic [redacted]"],
    ["token ghp_1234567890abcdef", "token [redacted]"],
    ["Token ab12", "Token ab12"],
  ];
  for (const [input, expected] of cases) assert.equal(r.scrub(input), expected, input);
});

test("X2: messages lose network URLs and URI userinfo; the user's own URIs stay", () => {
  const r = new Redactor();
  const cases: [string, string][] = [
    ["resource demo://resource/1 not found", "resource demo://resource/1 not found"],
    ["cannot read file:///home/x/notes.md", "cannot read file:///home/x/notes.md"],
    ["see https://internal.corp/mcp?key=k and wss://h/x", "see [url] and [url]"],
    ["HTTP://HOST/x", "[url]"],
    ["db postgres://admin:pa55@db.local/app failed", "db postgres://[redacted]@db.local/app failed"],
    ["mail user@example.com", "mail user@example.com"],
  ];
  for (const [input, expected] of cases) assert.equal(r.scrub(input), expected, input);
});

test("S4: result output loses configured secrets of 8 characters or more, and nothing else", () => {
  const long = "s3cret-VALUE/+=";
  const r = new Redactor([long, "short7c", "abcd"], { ambient: ["/home/user1"] });
  const text = [
    long,
    encodeURIComponent(long),
    Buffer.from(long).toString("base64"),
    Buffer.from(long).toString("base64url"),
    "short7c abcd /home/user1 https://host/x?q=1 demo://resource/1 no token is stored",
  ].join(" | ");
  assert.equal(
    r.redactSecrets(text),
    "[redacted] | [redacted] | [redacted] | [redacted] | short7c abcd /home/user1 https://host/x?q=1 demo://resource/1 no token is stored",
  );
  // Messages are stricter: short secrets and ambient values go too.
  assert.equal(r.scrub("short7c abcd /home/user1/x"), "[redacted] [redacted] [redacted]/x");
});

test("S4: a result document keeps its structure and exact values apart from the secrets", () => {
  const secret = "tok-9f8e7d6c5b4a";
  const r = new Redactor([secret]);
  const doc = {
    content: [{ type: "text", text: `echo ${secret}\n\x1b[2J` }],
    structuredContent: { [secret]: [1, true, null, { deep: `a${secret}b` }], uri: "file:///home/x/notes.md" },
    isError: false,
  };
  const out = r.redactDocument(doc);
  assert.deepEqual(out, {
    content: [{ type: "text", text: "echo [redacted]\n\x1b[2J" }],
    structuredContent: {
      "[redacted]": [1, true, null, { deep: "a[redacted]b" }],
      uri: "file:///home/x/notes.md",
    },
    isError: false,
  });
  assert.equal(doc.content[0]!.text.includes(secret), true, "the original is not changed");
  assert.equal(new Redactor().redactDocument(doc), doc, "nothing to redact: the same document");
});

test("X2/S1: serverText makes controls visible, scrubs, and cuts without splitting a character", () => {
  const r = new Redactor(["canary-123456"]);
  assert.equal(
    r.serverText("\x1b]52;c;canary-123456\x07 \u202Eevil\r\n"),
    "\\x1b]52;c;[redacted]\\x07 \\u202eevil",
  );
  const cutText = r.serverText(`${"x".repeat(299)}🙂tail`);
  assert.ok(cutText);
  assert.ok(!/[\ud800-\udbff]…$/.test(cutText), "no lone high surrogate before the ellipsis");
  assert.equal(r.serverText(42), undefined);
});

test("S4: the environment seeds credentials everywhere and other values in messages only", () => {
  const { secrets, ambient } = environmentSecrets({
    GITHUB_TOKEN: "ghp_abcdefgh12345678",
    DB_PASSWORD: "hunter2hunter2",
    OPENAI_API_KEY: "sk-proj-123456789",
    HOME: "/home/user1",
    LANG: "en_US.UTF-8",
    PATH: "/usr/local/bin:/usr/bin",
    SHORT_TOKEN: "abc",
    EMPTY: undefined,
  });
  assert.deepEqual(secrets.sort(), ["ghp_abcdefgh12345678", "hunter2hunter2", "sk-proj-123456789"].sort());
  assert.deepEqual(ambient.sort(), ["/home/user1", "en_US.UTF-8"].sort());
});

test("S4: secretsOf finds header values, bare scheme credentials, Basic passwords, userinfo and query values", () => {
  const basic = Buffer.from("alice:pa55-word!").toString("base64");
  const out = secretsOf(new URL("https://bob:s%20cret@h/x?key=k3y-value&mode=fast"), {
    authorization: `Basic ${basic}`,
    "x-api-key": "plain-key-1",
  });
  for (const s of [
    `Basic ${basic}`,
    basic,
    "alice:pa55-word!",
    "pa55-word!",
    "plain-key-1",
    "bob",
    "s cret",
    "k3y-value",
    "fast",
  ])
    assert.ok(out.includes(s), s);
});

test("X2: learn() and with() keep the ambient tier and the output threshold", () => {
  const r = new Redactor([], { ambient: ["amb-12345678"] });
  r.learn(["learned-12345678"]);
  const w = r.with(["added-12345678"]);
  assert.equal(w.scrub("amb-12345678 learned-12345678 added-12345678"), "[redacted] [redacted] [redacted]");
  assert.equal(
    w.redactSecrets("amb-12345678 learned-12345678 added-12345678"),
    "amb-12345678 [redacted] [redacted]",
  );
});

test("S4: a secret is redacted in its JSON-escaped forms and in base64 at every alignment", () => {
  const secret = 'k"ey\\with/é-CANARY-0123';
  const r = new Redactor([secret]);
  const b64 = (t: string) => Buffer.from(t).toString("base64");
  const forms = [
    JSON.stringify({ got: secret }),
    JSON.stringify(secret).replace(/\//g, "\\/"),
    JSON.stringify(secret).replace(/é/g, "\\u00e9"),
    new URLSearchParams({ q: `a ${secret}` }).toString(),
    b64(secret),
    b64(`:${secret}`),
    b64(`::${secret}`),
    b64(`auth=Bearer ${secret} and more`),
    Buffer.from(`x${secret}`).toString("base64url"),
  ];
  for (const form of forms) {
    const out = r.redactSecrets(form);
    assert.doesNotMatch(out, /CANARY/, form);
    for (const run of out.match(/[A-Za-z0-9+/_-]{8,}/g) ?? [])
      for (let start = 0; start < 4; start++)
        assert.doesNotMatch(Buffer.from(run.slice(start), "base64").toString("latin1"), /CANARY/, form);
    assert.match(out, /\[redacted\]/, form);
  }
});

test("S4: exactly the configured secrets: words, JWTs and tokens of the server's own pass untouched", () => {
  const r = new Redactor(["configured-secret-value"]);
  const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
  const text = `token Bearer abc.def-ghi-jkl ${jwt} password=hunter2hunter2`;
  assert.equal(r.redactSecrets(text), text);
  const doc = { content: [{ type: "text", text }], structuredContent: { token: jwt } };
  assert.equal(r.redactDocument(doc), doc, "a document with nothing to redact is returned as it is");
});

test("S4: a document is copied only along the branches that held a secret", () => {
  const r = new Redactor(["configured-secret-value"]);
  const clean = { list: [1, 2, { a: "x" }] };
  const doc = { clean, hit: ["ok", "has configured-secret-value in it"], ["configured-secret-value"]: 1 };
  const out = r.redactDocument(doc);
  assert.notEqual(out, doc);
  assert.equal(out.clean, clean, "an untouched branch is shared, not copied");
  assert.deepEqual(out.hit, ["ok", "has [redacted] in it"]);
  assert.deepEqual(Object.keys(out), ["clean", "hit", "[redacted]"], "key order is kept");
  assert.deepEqual(doc.hit, ["ok", "has configured-secret-value in it"], "the input is not changed");
});
