// Every server of the example fleet through `tether bridge`, with a host of each era: the
// official SDK 1.32 (a 2025 host, `initialize`) and client 2.4 pinned to 2026-07-28 (a modern
// host, `server/discover` and per-request `_meta`). Contract ID: N8 (eras never mix on the wire:
// the bridge translates where host and server differ).

import assert from "node:assert/strict";
import { test } from "node:test";
import { v1Host, v2Host } from "../helpers/bridge.ts";
import { HTTP_SERVER_NAMES, STDIO_SERVER_NAMES, useFleet } from "../helpers/fleet.ts";

const fleet = useFleet();

const textOf = (result: unknown) =>
  ((result as { content: { type: string; text?: string }[] }).content[0]?.text ?? "") as string;

function targets(): { name: string; args: string[] }[] {
  const f = fleet();
  return [
    ...HTTP_SERVER_NAMES.map((name) => ({ name, args: [f.http(name).url] })),
    ...STDIO_SERVER_NAMES.map((name) => {
      const s = f.stdioServer(name);
      return { name, args: ["--", s.command, ...s.args] };
    }),
  ];
}

test("bridge N8: a 2025 host (SDK 1.32) reaches every fleet server through the bridge", async () => {
  for (const { name, args } of targets()) {
    const { client } = await v1Host(args);
    try {
      const tools = await client.listTools();
      assert.ok(
        tools.tools.some((t) => t.name === "echo"),
        name,
      );
      assert.match(
        textOf(await client.callTool({ name: "echo", arguments: { message: name } })),
        new RegExp(`${name}$`),
        name,
      );
    } finally {
      await client.close();
    }
  }
});

test("bridge N8: a 2026-07-28 host (client 2.4, pinned) reaches every fleet server through the bridge", async () => {
  for (const { name, args } of targets()) {
    const { client } = await v2Host(args, { pin: "2026-07-28" });
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28", name);
      assert.match(
        textOf(await client.callTool({ name: "echo", arguments: { message: name } })),
        new RegExp(`${name}$`),
        name,
      );
    } finally {
      await client.close();
    }
  }
});
