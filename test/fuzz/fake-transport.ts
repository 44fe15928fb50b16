// An in-memory Transport for driving a Session directly. Unlike the real transports it catches
// nothing: `deliver` and `fail` call the session's listeners bare, so anything the session throws
// while receiving surfaces in the test instead of vanishing into a listener guard.

import type { TransportMode } from "../../src/errors/codes.ts";
import type { TetherError } from "../../src/errors/tether-error.ts";
import type { SendContext, Transport } from "../../src/jsonrpc/channel.ts";
import type { JsonRpcMessage } from "../../src/jsonrpc/messages.ts";
import type { Unsubscribe } from "../../src/lifecycle/listeners.ts";

export interface Sent {
  message: JsonRpcMessage;
  ctx: SendContext;
}

export class FakeTransport implements Transport {
  readonly mode: TransportMode = "stdio";
  readonly cleanupErrors: unknown[] = [];
  readonly sent: Sent[] = [];
  closeCalls = 0;
  /** The next `send` of a request rejects with this error (once). */
  failNextRequest: Error | undefined;
  readonly #messages = new Set<(message: JsonRpcMessage, bytes: number) => void>();
  readonly #closes = new Set<(error: TetherError) => void>();
  /** Every listener ever added, unsubscribed or not: a careless transport keeps calling them. */
  readonly #everMessages: ((message: JsonRpcMessage, bytes: number) => void)[] = [];
  #closing: Promise<void> | undefined;

  /** @param ignoresUnsubscribe keep delivering to listeners that unsubscribed (a careless transport). */
  constructor(readonly ignoresUnsubscribe = false) {}

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JsonRpcMessage, ctx: SendContext): Promise<void> {
    this.sent.push({ message, ctx });
    if ("method" in message && "id" in message && this.failNextRequest) {
      const error = this.failNextRequest;
      this.failNextRequest = undefined;
      return Promise.reject(error);
    }
    return Promise.resolve();
  }

  onMessage(listener: (message: JsonRpcMessage, bytes: number) => void): Unsubscribe {
    this.#messages.add(listener);
    this.#everMessages.push(listener);
    return () => this.#messages.delete(listener);
  }

  onClose(listener: (error: TetherError) => void): Unsubscribe {
    this.#closes.add(listener);
    return () => this.#closes.delete(listener);
  }

  close(): Promise<void> {
    this.closeCalls++;
    this.#closing ??= Promise.resolve();
    return this.#closing;
  }

  get listenerCount(): number {
    return this.#messages.size + this.#closes.size;
  }

  /** Hands a received message to the listeners, uncaught. */
  deliver(message: JsonRpcMessage, bytes: number): void {
    const targets = this.ignoresUnsubscribe ? [...this.#everMessages] : [...this.#messages];
    for (const l of targets) l(message, bytes);
  }

  /** Reports the channel failed, uncaught. */
  fail(error: TetherError): void {
    for (const l of [...this.#closes]) l(error);
  }
}
