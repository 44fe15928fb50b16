// Multi-round-trip requests (2026-07-28): a tool call answered with `input_required` is answered
// from the client's handlers and retried with a fresh id and the server's state, byte for byte.
export const scenarios = {
  "sep-2322-client-request-state": (ctx) =>
    ctx.session(
      { handlers: { elicitation: () => ({ action: "accept", content: { confirmed: true } }) } },
      async (client) => {
        await client.listTools();
        await client.callTool("test_mrtr_echo_state", {});
        await client.callTool("test_mrtr_no_state", {});
        await client.callTool("test_mrtr_unrelated", {});
        // A result without resultType: whatever tether makes of it, it must not be retried.
        await client.callTool("test_mrtr_no_result_type", {}).catch((error) => {
          ctx.log(`test_mrtr_no_result_type refused: ${error.message}`);
        });
      },
    ),
};
