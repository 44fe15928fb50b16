import type { TetherError } from "../errors/tether-error.ts";
import type { JsonRpcMessage } from "../jsonrpc/messages.ts";
import { Listeners, type Unsubscribe } from "../lifecycle/listeners.ts";

/**
 * What every transport shares: the message and close listeners, and a closure that happens
 * once, with the first cause. Subclasses call `emitMessage` and `fail`; `fail` returns whether
 * this call was the one that closed the channel.
 */
export abstract class TransportBase {
  readonly #messages = new Listeners<[JsonRpcMessage, number]>();
  readonly #closes = new Listeners<[TetherError]>();
  #closure: TetherError | undefined;
  readonly cleanupErrors: unknown[] = [];

  onMessage(listener: (message: JsonRpcMessage, bytes: number) => void): Unsubscribe {
    return this.#messages.add(listener);
  }

  onClose(listener: (error: TetherError) => void): Unsubscribe {
    return this.#closes.add(listener);
  }

  /** The error the channel closed with, once it has. */
  protected get closure(): TetherError | undefined {
    return this.#closure;
  }

  protected emitMessage(message: JsonRpcMessage, bytes: number): void {
    if (!this.#closure) this.#messages.emit(message, bytes);
  }

  protected fail(error: TetherError): boolean {
    if (this.#closure) return false;
    this.#closure = error;
    this.#closes.emit(error);
    this.#closes.clear();
    this.#messages.clear();
    return true;
  }
}
